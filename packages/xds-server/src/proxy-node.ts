// Who is on the other end of a stream: the node of its first discovery request. The node id is
// `<mesh>.<name>` (`.<name>` for zone proxies); the node metadata is what the bootstrap put there
// (docs/xds.md, Connecting).
import { dataplaneKind, zoneEgressKind, zoneIngressKind } from '@mesh/model';
import { structToJson } from './envoy-protos.js';

export type ProxyType = 'dataplane' | 'ingress' | 'egress';

/** The resource kind of each proxy type. */
export const RESOURCE_TYPE_OF: Readonly<Record<ProxyType, string>> = {
  dataplane: dataplaneKind.name,
  ingress: zoneIngressKind.name,
  egress: zoneEgressKind.name,
};

/** Node metadata keys (the reference's names). */
export const METADATA = {
  adminPort: 'dataplane.admin.port',
  adminAddress: 'dataplane.admin.address',
  proxyType: 'dataplane.proxyType',
  resource: 'dataplane.resource',
  dnsPort: 'dataplane.dns.port',
  dnsEmptyPort: 'dataplane.dns.empty.port',
  version: 'version',
  features: 'features',
  accessLogSocketPath: 'accessLogSocketPath',
  metricsSocketPath: 'metricsSocketPath',
  metricsCertPath: 'metricsCertPath',
  metricsKeyPath: 'metricsKeyPath',
  /** Proxyless gRPC clients cannot attach call credentials: their token travels in the node metadata. */
  token: 'dataplane.token',
} as const;

/** A bootstrap request naming this feature gets a bootstrap for incremental xDS (docs/xds.md, Incremental xDS). */
export const FEATURE_DELTA_GRPC = 'feature-delta-grpc';

export interface ProxyNode {
  readonly id: string;
  readonly mesh: string;
  readonly name: string;
  readonly proxyType: ProxyType;
  /** A gRPC library's xDS client, not Envoy (docs/xds.md, Proxyless gRPC). */
  readonly grpcClient: boolean;
  /** The node metadata as JSON (a google.protobuf.Struct). */
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** A request the stream cannot serve: its message closes the stream. */
export class StreamRefusal extends Error {
  constructor(
    message: string,
    /** gRPC status code; UNKNOWN (2) as the reference's plain errors become. */
    readonly code = 2,
  ) {
    super(message);
  }
}

const PROXY_TYPES: readonly string[] = ['dataplane', 'ingress', 'egress'];

/** The node of a stream's first request. */
export function proxyNodeOf(node: Record<string, unknown> | undefined): ProxyNode {
  const id = typeof node?.id === 'string' ? node.id : '';
  const dot = id.indexOf('.');
  if (dot < 0) throw new StreamRefusal(`invalid node ID: the proxy ID "${id}" must have the form <mesh>.<name>`);
  const metadata = structToJson(node?.metadata);
  const declared = typeof metadata[METADATA.proxyType] === 'string' ? (metadata[METADATA.proxyType] as string) : '';
  if (declared !== '' && !PROXY_TYPES.includes(declared)) throw new StreamRefusal(`unsupported proxy type "${declared}"`);
  const mesh = id.slice(0, dot);
  const proxyType = (declared || (mesh === '' ? 'ingress' : 'dataplane')) as ProxyType;
  const userAgent = typeof node?.user_agent_name === 'string' ? node.user_agent_name : '';
  return {
    id,
    mesh: proxyType === 'dataplane' ? mesh : '',
    name: id.slice(dot + 1),
    proxyType,
    grpcClient: /grpc/i.test(userAgent),
    metadata,
  };
}

const portOf = (value: unknown): number | undefined => {
  const port = typeof value === 'string' ? Number(value) : typeof value === 'number' ? value : Number.NaN;
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
};

/** Envoy's admin port as the node reports it. */
export const adminPortOf = (node: ProxyNode): number | undefined => portOf(node.metadata[METADATA.adminPort]);

/** The port the agent wants the DNS listener on (`dataplane.dns.port`); undefined when it runs no DNS. */
export const dnsPortOf = (node: ProxyNode): number | undefined => portOf(node.metadata[METADATA.dnsPort]);

export const stringMetadata = (node: ProxyNode, key: string): string | undefined => {
  const value = node.metadata[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The runner's and Envoy's versions in the insight's form (`meshDp`, `envoy`, `dependencies`),
 * from a bootstrap request's `version` or the node metadata's. The reference's runner names its
 * own `kumaDp` and Envoy's compatibility `kumaDpCompatible`: both are taken under our names.
 */
export function proxyVersion(version: unknown): { meshDp?: Record<string, unknown>; envoy?: Record<string, unknown>; dependencies?: Record<string, unknown> } {
  if (!isObject(version)) return {};
  const { meshDp, kumaDp, envoy, dependencies } = version;
  const out: { meshDp?: Record<string, unknown>; envoy?: Record<string, unknown>; dependencies?: Record<string, unknown> } = {};
  const runner = isObject(meshDp) ? meshDp : kumaDp;
  if (isObject(runner)) out.meshDp = runner;
  if (isObject(envoy)) {
    const { kumaDpCompatible, ...rest } = envoy;
    out.envoy = kumaDpCompatible !== undefined && rest.meshDpCompatible === undefined ? { ...rest, meshDpCompatible: kumaDpCompatible } : rest;
  }
  if (isObject(dependencies)) out.dependencies = dependencies;
  return out;
}

/** `version` of the node metadata in the insight's form. */
export const proxyVersionOf = (node: ProxyNode): Record<string, unknown> => proxyVersion(node.metadata[METADATA.version]);
