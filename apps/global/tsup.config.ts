export { controlPlaneBinaryConfig as default } from '../../tsup.base.js';
