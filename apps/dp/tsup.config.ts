export { binaryConfig as default } from '../../tsup.base.js';
