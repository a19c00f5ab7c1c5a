// Resource names (docs/xds.md, What a proxy receives) and the tag encodings proxies exchange: the `x-mesh-tags` header, the
// source regex matched against it, SNI values and SPIFFE identities.
import { createHash } from 'node:crypto';
import { SERVICE_TAG, type TagMap } from '@mesh/model';

/** Tag of a split destination in another mesh (cross-mesh gateways). */
export const MESH_TAG = 'mesh.io/mesh';
/** Tag the reference adds to an external service's endpoint when it carries TLS settings. */
export const EXTERNAL_SERVICE_TAG = 'mesh.io/external-service-name';
export const TAGS_HEADER = 'x-mesh-tags';
export const MESH_ALPN = 'mesh';
export const ADMIN_CLIENT_SAN = 'mesh-cp';

export const ADMIN_NAME = 'mesh:envoy:admin';
export const PROMETHEUS_LISTENER_NAME = 'mesh:metrics:prometheus';
export const METRICS_HIJACKER_NAME = 'mesh:metrics:hijacker';
export const DNS_LISTENER_NAME = 'mesh:dns';

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
export const sortedTagKeys = (tags: TagMap): string[] => Object.keys(tags).sort(byCodeUnit);

/** `host:port`, IPv6 bracketed. */
export const joinHostPort = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

export const inboundListenerName = (address: string, port: number): string => `inbound:${joinHostPort(address, port)}`;
export const outboundListenerName = (address: string, port: number): string => `outbound:${joinHostPort(address, port)}`;
export const localClusterName = (port: number): string => `localhost:${port}`;
export const inboundRouteName = (service: string): string => `inbound:${service}`;
export const outboundRouteName = (service: string): string => `outbound:${service}`;
export const tracingClusterName = (backend: string): string => `tracing:${backend}`;
/** Clusters of a zone proxy serve several meshes. */
export const meshClusterName = (mesh: string, service: string): string => `${mesh}:${service}`;
export const identityCertSecretName = (mesh: string): string => `identity_cert:secret:${mesh}`;
export const meshCaSecretName = (mesh: string): string => `mesh_ca:secret:${mesh}`;

export const passThroughNames = {
  ipv4: { outbound: 'outbound:passthrough:ipv4', inbound: 'inbound:passthrough:ipv4', any: '0.0.0.0', inboundSource: '127.0.0.6' },
  ipv6: { outbound: 'outbound:passthrough:ipv6', inbound: 'inbound:passthrough:ipv6', any: '::', inboundSource: '::6' },
} as const;

/**
 * The cluster of a destination: the service alone, or the service and a hash of every tag when
 * the destination selects a subset or `identifying` tags (a gateway host's) set it apart;
 * `_<mesh>` for a destination in another mesh.
 */
export function destinationClusterName(tags: TagMap, identifying: TagMap = {}): string {
  const service = tags[SERVICE_TAG] ?? '';
  const keys = sortedTagKeys(tags);
  const identifyingKeys = sortedTagKeys(identifying);
  let name = service;
  if (keys.length > 1 || identifyingKeys.length > 0) {
    const hash = createHash('sha256');
    for (const key of keys) hash.update(key).update(tags[key] ?? '');
    for (const key of identifyingKeys) hash.update(key).update(identifying[key] ?? '');
    name = `${service}-${hash.digest('hex').slice(0, 16)}`;
  }
  const otherMesh = tags[MESH_TAG];
  return otherMesh === undefined ? name : `${name}_${otherMesh}`;
}

/** Tags without some keys. */
export function tagsWithout(tags: TagMap, ...keys: string[]): TagMap {
  const result: TagMap = {};
  for (const [key, value] of Object.entries(tags)) if (!keys.includes(key)) result[key] = value;
  return result;
}

/** `k1=v1,k2=v2` in key order: the identity of a tag set. */
export const tagsKey = (tags: TagMap): string => sortedTagKeys(tags).map((key) => `${key}=${tags[key]}`).join(',');

/** `&k=v1,v2&` per key, in key order: the tags a proxy's requests carry (`x-mesh-tags`). */
export function serializeTagsHeader(tagSets: readonly TagMap[]): string {
  const values = new Map<string, Set<string>>();
  for (const tags of tagSets) {
    for (const [key, value] of Object.entries(tags)) {
      let set = values.get(key);
      if (!set) values.set(key, (set = new Set()));
      set.add(value);
    }
  }
  return [...values.keys()]
    .sort(byCodeUnit)
    .map((key) => `&${key}=${[...(values.get(key) ?? [])].sort(byCodeUnit).join(',')}&`)
    .join('');
}

/** A regex over `x-mesh-tags` matching requests from proxies a selector selects. */
function selectorRegex(selector: TagMap): string {
  let regex = '';
  for (const key of sortedTagKeys(selector)) {
    const value = selector[key];
    const valuePart = value === '*' ? '' : `[^&]*${value}[,&]`;
    regex += `&${key}=${valuePart.replaceAll('.', '\\.')}.*`;
  }
  return `.*${regex}`;
}

/** The regex of several selectors: any of them. */
export function sourcesRegex(selectors: readonly TagMap[]): string {
  const regexes = selectors.map(selectorRegex);
  return regexes.length <= 1 ? (regexes[0] ?? '') : `(${regexes.join('|')})`;
}

/** `service{k=v,...}` with the extra tags in key order, or the bare service. */
export function sniFromTags(tags: TagMap): string {
  const service = tags[SERVICE_TAG] ?? '';
  const extra = tagsKey(tagsWithout(tags, SERVICE_TAG));
  return extra === '' ? service : `${service}{${extra}}`;
}

export const meshSpiffePrefix = (mesh: string): string => `spiffe://${mesh}/`;
export const serviceSpiffeId = (mesh: string, service: string): string => `spiffe://${mesh}/${service}`;
export const tagIdentity = (key: string, value: string): string => `mesh://${key}/${value}`;

/** A builtin gateway's listener of one port: `<gateway>:<PROTOCOL>:<port>`. */
export const gatewayListenerName = (gateway: string, protocol: string, port: number): string => `${gateway}:${protocol}:${port}`;

/** The protocol and port a gateway listener's name carries; undefined for another name. */
export function gatewayListenerOf(name: string): { protocol: string; port: number } | undefined {
  const parts = /:([A-Z]+):(\d+)$/.exec(name);
  return parts ? { protocol: parts[1] ?? '', port: Number(parts[2]) } : undefined;
}
