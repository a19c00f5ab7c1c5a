export { libraryConfig as default } from '../../tsup.base.js';
