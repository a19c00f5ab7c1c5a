// A proxy's configuration as the xDS server sends it: per resource type, the encoded resources by
// name and a version that changes only when they do (docs/xds.md, Versions).
import { type ProxyConfig, scalarText } from '@mesh/xds-renderer';
import { type EncodedResource, encodeResource, TYPE_URLS, versionOf } from './wire.js';

export { TYPE_URLS };

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

/** What the names a proxy asks for select of a type snapshot: its version, the resources and their names joined. */
export interface Selection {
  readonly version: string;
  readonly resources: readonly EncodedResource[];
  readonly names: string;
}

export interface TypeSnapshot {
  readonly version: string;
  /** The version of the resources alone (`version` may carry a suffix). */
  readonly resourcesVersion: string;
  readonly resources: ReadonlyMap<string, EncodedResource>;
  /**
   * The last selection made of it, by the names that made it (a stream's key of them): every ACK
   * reads it again, and the proxies of a class sharing it ask the same.
   */
  lastSelection: { readonly by: string; readonly selection: Selection } | undefined;
}

function newTypeSnapshot(resourcesVersion: string, versionSuffix: string, resources: ReadonlyMap<string, EncodedResource>): TypeSnapshot {
  return { version: resourcesVersion + versionSuffix, resourcesVersion, resources, lastSelection: undefined };
}

function byName(resources: readonly EncodedResource[]): Map<string, EncodedResource> {
  const map = new Map<string, EncodedResource>();
  for (const resource of resources) map.set(resource.name, resource);
  return map;
}

export interface Snapshot {
  /** What was rendered, for `/xds` of a connected proxy. */
  readonly config: ProxyConfig;
  readonly types: ReadonlyMap<string, TypeSnapshot>;
}

/** Whether a type snapshot holds exactly these encodings, in this order. */
function holdsExactly(snapshot: TypeSnapshot, resources: readonly EncodedResource[]): boolean {
  if (snapshot.resources.size !== resources.length) return false;
  let at = 0;
  for (const resource of snapshot.resources.values()) if (resource !== resources[at++]) return false;
  return true;
}

/**
 * Where the type snapshots of one list of encodings are found: one step per encoding, each keyed
 * by the encoding object, so a lookup builds no key. Entries last while their encodings do (weak
 * keys); a list keeps the snapshot of its latest version suffix only.
 */
interface SnapshotsOfList {
  /** Made when a longer list first goes through: most places are the ends of their lists. */
  next: WeakMap<EncodedResource, SnapshotsOfList> | undefined;
  last: TypeSnapshot | undefined;
  lastSuffix: string;
}

const listOfSnapshots = (): SnapshotsOfList => ({ next: undefined, last: undefined, lastSuffix: '' });

/**
 * Type snapshots of clusters and endpoints by what they hold: the proxies of a class hold the same
 * ones, which are then versioned once (docs/xds.md, Pushing changes). Listeners and secrets are
 * the proxy's own (its address, its certificate): they are not looked up.
 */
const sharedSnapshots = new Map<string, SnapshotsOfList>([
  [TYPE_URLS.cluster, listOfSnapshots()],
  [TYPE_URLS.endpoints, listOfSnapshots()],
]);

/** The place of a list of encodings among the type's shared snapshots; undefined for a type not shared. */
function sharedPlaceOf(typeUrl: string, resources: readonly EncodedResource[]): SnapshotsOfList | undefined {
  const root = sharedSnapshots.get(typeUrl);
  if (!root) return undefined;
  let place: SnapshotsOfList = root;
  for (const resource of resources) {
    place.next ??= new WeakMap();
    let next: SnapshotsOfList | undefined = place.next.get(resource);
    if (!next) place.next.set(resource, (next = listOfSnapshots()));
    place = next;
  }
  return place;
}

/**
 * A type's snapshot; the previous one when it holds the same encodings (a change touches a type
 * or two of a proxy, and a stream finds its selection of an unchanged type already made), else
 * for clusters and endpoints one another proxy holds with the same encodings.
 */
function typeSnapshot(typeUrl: string, resources: readonly EncodedResource[], previous: TypeSnapshot | undefined, versionSuffix = ''): TypeSnapshot {
  if (previous && holdsExactly(previous, resources)) {
    const version = previous.resourcesVersion + versionSuffix;
    return version === previous.version ? previous : newTypeSnapshot(previous.resourcesVersion, versionSuffix, previous.resources);
  }
  const place = sharedPlaceOf(typeUrl, resources);
  if (place?.last && place.lastSuffix === versionSuffix) return place.last;
  const snapshot = newTypeSnapshot(versionOf(resources), versionSuffix, byName(resources));
  if (place) {
    place.last = snapshot;
    place.lastSuffix = versionSuffix;
  }
  return snapshot;
}

/** Encodes a type's resources; `before` are the ones of the previous configuration, in the order rendered. */
function encoded<T extends Record<string, unknown>>(items: readonly T[], nameOf: (item: T) => string, before: readonly T[] | undefined): EncodedResource[] {
  const out = new Array<EncodedResource>(items.length);
  for (let at = 0; at < items.length; at++) out[at] = encodeResource(nameOf(items[at] as T), items[at] as T, before?.[at]);
  return out;
}

/**
 * Encodes a rendered configuration, keeping what it shares with the proxy's previous snapshot. A
 * changed cluster stays warming in Envoy until endpoints follow it, so the endpoints' version
 * moves whenever the clusters' does.
 */
export function snapshotOf(config: ProxyConfig, previous?: Snapshot): Snapshot {
  const typeBefore = (typeUrl: string) => previous?.types.get(typeUrl);
  const last = previous?.config;
  const clusters = typeSnapshot(TYPE_URLS.cluster, encoded(config.clusters, (cluster) => cluster.name, last?.clusters), typeBefore(TYPE_URLS.cluster));
  const types = new Map<string, TypeSnapshot>([
    [TYPE_URLS.listener, typeSnapshot(TYPE_URLS.listener, encoded(config.listeners, (listener) => listener.name, last?.listeners), typeBefore(TYPE_URLS.listener))],
    [TYPE_URLS.cluster, clusters],
    [
      TYPE_URLS.endpoints,
      typeSnapshot(TYPE_URLS.endpoints, encoded(config.endpoints, (assignment) => assignment.clusterName, last?.endpoints), typeBefore(TYPE_URLS.endpoints), `.${clusters.version.slice(0, 8)}`),
    ],
    [TYPE_URLS.secret, typeSnapshot(TYPE_URLS.secret, encoded(config.secrets, (secret) => secret.name, last?.secrets), typeBefore(TYPE_URLS.secret))],
    [TYPE_URLS.route, typeSnapshot(TYPE_URLS.route, encoded(config.routes, (route) => scalarText(route.name), last?.routes), typeBefore(TYPE_URLS.route))],
  ]);
  return { config, types };
}
