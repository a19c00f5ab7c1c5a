// The data plane server: ADS for proxies, `POST /bootstrap`, proxy insights and the live views of
// connected proxies. See README.md.
export { DataplaneServer, type DataplaneServerOptions, type Leadership } from './dp-server.js';
export type { AuthnType } from './auth.js';
export type { BootstrapSettings } from './bootstrap.js';
export type { HdsSettings } from './hds.js';
export type { Logger } from './ads-server.js';
export type { GenerationResult, XdsMetrics } from './telemetry.js';
export { encodingCacheBytes } from './wire.js';
