// A proxy's configuration as the xDS server sends it: per resource type, the encoded resources by
// name and a version that changes only when they do (docs/xds.md, Versions).
import { ENVOY_TYPE_URLS, type ProxyConfig } from '@mesh/xds-renderer';
import { type EncodedResource, encodeResource, versionOf } from './wire.js';

export const TYPE_URLS = {
  listener: ENVOY_TYPE_URLS.listener,
  cluster: ENVOY_TYPE_URLS.cluster,
  endpoints: ENVOY_TYPE_URLS.clusterLoadAssignment,
  secret: ENVOY_TYPE_URLS.secret,
  route: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
} as const;

/** Secrets and clusters first, then the endpoints of the clusters, then the listeners using them (docs/xds.md). */
export const SEND_ORDER: readonly string[] = [TYPE_URLS.secret, TYPE_URLS.cluster, TYPE_URLS.endpoints, TYPE_URLS.listener, TYPE_URLS.route];

/** Types whose resources are only sent when named in the request (the others: all, unless names are given). */
const NAMED_ONLY = new Set<string>([TYPE_URLS.endpoints, TYPE_URLS.secret]);

export const sentOnlyWhenNamed = (typeUrl: string): boolean => NAMED_ONLY.has(typeUrl);

/** The insight's per-type counters (`cds`, `eds`, `lds`, `rds`); other types count in the total only. */
export const STAT_OF_TYPE: Readonly<Record<string, 'cds' | 'eds' | 'lds' | 'rds'>> = {
  [TYPE_URLS.cluster]: 'cds',
  [TYPE_URLS.endpoints]: 'eds',
  [TYPE_URLS.listener]: 'lds',
  [TYPE_URLS.route]: 'rds',
};

export interface TypeSnapshot {
  readonly version: string;
  readonly resources: ReadonlyMap<string, EncodedResource>;
}

export interface Snapshot {
  /** What was rendered, for `/xds` of a connected proxy. */
  readonly config: ProxyConfig;
  readonly types: ReadonlyMap<string, TypeSnapshot>;
}

function typeSnapshot(resources: readonly EncodedResource[], versionSalt = ''): TypeSnapshot {
  return { version: versionOf(resources) + versionSalt, resources: new Map(resources.map((resource) => [resource.name, resource])) };
}

const named = <T extends Record<string, unknown>>(items: readonly T[], nameOf: (item: T) => string): EncodedResource[] =>
  items.map((item) => encodeResource(nameOf(item), item));

/**
 * Encodes a rendered configuration. A changed cluster stays warming in Envoy until endpoints
 * follow it, so the endpoints' version moves whenever the clusters' does.
 */
export function snapshotOf(config: ProxyConfig): Snapshot {
  const clusters = typeSnapshot(named(config.clusters, (cluster) => cluster.name));
  const types = new Map<string, TypeSnapshot>([
    [TYPE_URLS.listener, typeSnapshot(named(config.listeners, (listener) => listener.name))],
    [TYPE_URLS.cluster, clusters],
    [TYPE_URLS.endpoints, typeSnapshot(named(config.endpoints, (assignment) => assignment.clusterName), `.${clusters.version.slice(0, 8)}`)],
    [TYPE_URLS.secret, typeSnapshot(named(config.secrets, (secret) => secret.name))],
    [TYPE_URLS.route, typeSnapshot(named(config.routes, (route) => String(route.name ?? '')))],
  ]);
  return { config, types };
}
