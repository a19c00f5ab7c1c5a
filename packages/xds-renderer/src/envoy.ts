// Envoy v3 resources as plain proto3-JSON objects: the type URLs and the small shapes every
// generator shares (addresses, config sources, typed extensions).

export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
/** A JSON object; keys holding `undefined` are absent (JSON.stringify drops them). */
export interface JsonObject {
  [key: string]: JsonValue | undefined;
}

/**
 * A scalar JSON value as `String` writes it; '' for anything else, so a misplaced object or list
 * in free-form config reads as absent rather than as "[object Object]".
 */
export const scalarText = (value: unknown): string =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';

/** A top-level resource or an `Any`: its `@type` names the message. */
export interface TypedObject extends JsonObject {
  '@type': string;
}

export interface Listener extends TypedObject {
  name: string;
}
export interface Cluster extends TypedObject {
  name: string;
}
export interface ClusterLoadAssignment extends TypedObject {
  clusterName: string;
}
export interface Secret extends TypedObject {
  name: string;
}

const TYPE_PREFIX = 'type.googleapis.com/';

export const TYPE = {
  listener: `${TYPE_PREFIX}envoy.config.listener.v3.Listener`,
  cluster: `${TYPE_PREFIX}envoy.config.cluster.v3.Cluster`,
  clusterLoadAssignment: `${TYPE_PREFIX}envoy.config.endpoint.v3.ClusterLoadAssignment`,
  secret: `${TYPE_PREFIX}envoy.extensions.transport_sockets.tls.v3.Secret`,
  routeConfiguration: `${TYPE_PREFIX}envoy.config.route.v3.RouteConfiguration`,
  httpConnectionManager: `${TYPE_PREFIX}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
  tcpProxy: `${TYPE_PREFIX}envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy`,
  networkRbac: `${TYPE_PREFIX}envoy.extensions.filters.network.rbac.v3.RBAC`,
  kafkaBroker: `${TYPE_PREFIX}envoy.extensions.filters.network.kafka_broker.v3.KafkaBroker`,
  router: `${TYPE_PREFIX}envoy.extensions.filters.http.router.v3.Router`,
  compressor: `${TYPE_PREFIX}envoy.extensions.filters.http.compressor.v3.Compressor`,
  gzipCompressor: `${TYPE_PREFIX}envoy.extensions.compression.gzip.compressor.v3.Gzip`,
  fault: `${TYPE_PREFIX}envoy.extensions.filters.http.fault.v3.HTTPFault`,
  localRateLimit: `${TYPE_PREFIX}envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit`,
  grpcStats: `${TYPE_PREFIX}envoy.extensions.filters.http.grpc_stats.v3.FilterConfig`,
  tlsInspector: `${TYPE_PREFIX}envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector`,
  dnsFilter: `${TYPE_PREFIX}envoy.extensions.filters.udp.dns_filter.v3.DnsFilterConfig`,
  downstreamTlsContext: `${TYPE_PREFIX}envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext`,
  upstreamTlsContext: `${TYPE_PREFIX}envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext`,
  httpProtocolOptions: `${TYPE_PREFIX}envoy.extensions.upstreams.http.v3.HttpProtocolOptions`,
  fileAccessLog: `${TYPE_PREFIX}envoy.extensions.access_loggers.file.v3.FileAccessLog`,
  zipkin: `${TYPE_PREFIX}envoy.config.trace.v3.ZipkinConfig`,
  datadog: `${TYPE_PREFIX}envoy.config.trace.v3.DatadogConfig`,
  bootstrapDump: `${TYPE_PREFIX}envoy.admin.v3.BootstrapConfigDump`,
  clustersDump: `${TYPE_PREFIX}envoy.admin.v3.ClustersConfigDump`,
  endpointsDump: `${TYPE_PREFIX}envoy.admin.v3.EndpointsConfigDump`,
  listenersDump: `${TYPE_PREFIX}envoy.admin.v3.ListenersConfigDump`,
  routesDump: `${TYPE_PREFIX}envoy.admin.v3.RoutesConfigDump`,
  secretsDump: `${TYPE_PREFIX}envoy.admin.v3.SecretsConfigDump`,
} as const;

/** The key of upstream HTTP options in a cluster's `typedExtensionProtocolOptions`. */
export const HTTP_PROTOCOL_OPTIONS_KEY = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

export const FILTER = {
  httpConnectionManager: 'envoy.filters.network.http_connection_manager',
  tcpProxy: 'envoy.filters.network.tcp_proxy',
  rbac: 'envoy.filters.network.rbac',
  kafkaBroker: 'envoy.filters.network.kafka_broker',
  router: 'envoy.filters.http.router',
  fault: 'envoy.filters.http.fault',
  localRateLimit: 'envoy.filters.http.local_ratelimit',
  grpcStats: 'envoy.filters.http.grpc_stats',
  tlsInspector: 'envoy.filters.listener.tls_inspector',
  dnsFilter: 'envoy.filters.udp.dns_filter',
  tlsTransportSocket: 'envoy.transport_sockets.tls',
} as const;

/** Resources arrive over the one ADS stream. */
export const adsConfigSource = (): JsonObject => ({ ads: {}, resourceApiVersion: 'V3' });

export const socketAddress = (address: string, port: number): JsonObject => ({ socketAddress: { address, portValue: port } });

/** A named extension with its typed config (network/HTTP filters, transport sockets, loggers). */
export const typedExtension = (name: string, typedConfig: TypedObject): JsonObject => ({ name, typedConfig });

/** Stat names allow letters, digits, `_` and `-` only. */
export const sanitizeMetric = (name: string): string => name.replace(/[^a-zA-Z_\-0-9]/g, '_');
