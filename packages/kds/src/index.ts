export { zoneTokenAuthentication } from './authentication.js';
export { GlobalSyncServer, type GlobalSyncOptions, type KdsRouter } from './global-server.js';
export { ZoneSyncClient, syncUrl, type ZoneSyncOptions } from './zone-client.js';
export { ZoneIngressServices, type ZoneIngressServicesOptions } from './ingress-services.js';
export type { AdminReply, Version } from './protocol.js';
export type { SyncLogger, SyncMetrics } from './telemetry.js';
