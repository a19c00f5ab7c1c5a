export { runBinary, type Binary } from './main.js';
export { startControlPlane, type RunningControlPlane } from './control-plane.js';
export { loadConfig, configKeys, ConfigError, DEFAULT_CONFIG, type ControlPlaneConfig } from './config.js';
