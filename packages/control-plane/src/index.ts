export { runBinary, type Binary } from './main.js';
export type { EngineSettings } from './launch.js';
export { startControlPlane, type ControlPlaneAddresses, type ControlPlanePorts, type RunningControlPlane, type StartOptions } from './control-plane.js';
export { loadConfig, resolveConfig, configKeys, ConfigError, DEFAULT_CONFIG, type ControlPlaneConfig, type ControlPlaneSettings } from './config.js';
