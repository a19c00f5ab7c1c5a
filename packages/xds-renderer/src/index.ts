// Envoy v3 configuration of data plane proxies, rendered by pure functions from a mesh's state
// and the policies matched for each proxy. See README.md.
export type { Cluster, ClusterLoadAssignment, JsonObject, JsonValue, Listener, Secret, TypedObject } from './envoy.js';
export { TYPE as ENVOY_TYPE_URLS, scalarText } from './envoy.js';
export {
  type Endpoint,
  type ExternalServiceTls,
  MeshContext,
  type MeshState,
  prepareMeshContext,
  type ZoneEgressResource,
  type ZoneIngressResource,
} from './mesh-context.js';
export { forgetOwnResources, type ProxyMetadata } from './proxy-state.js';
export { type ProxyConfig, type ProxyInput, renderProxyConfig } from './proxy.js';
export { renderZoneEgressConfig, renderZoneIngressConfig, type ZoneProxyMetadata } from './zone-proxies.js';
export {
  type ConfigDump,
  type ConfigDumpOptions,
  type ConfigDumpSection,
  renderDataplaneConfigDump,
  renderZoneEgressConfigDump,
  renderZoneIngressConfigDump,
} from './config-dump.js';
export type { CertificatePair, MeshIdentity } from './tls.js';
export { destinationClusterName } from './names.js';
