// TrafficRoute resolution (docs/matching.md, The services a proxy reaches): wildcards in a route's destinations are filled from the
// outbound, and the routes decide which services a proxy reaches (its destination map).
import { SERVICE_TAG, type TagMap, type TrafficRouteSpec } from '@mesh/model';
import type { IndexedPolicy } from './policy-index.js';
import { WILDCARD } from './selector.js';

export type TrafficRouteConf = NonNullable<TrafficRouteSpec['conf']>;
export type TrafficRouteSplit = NonNullable<TrafficRouteConf['split']>[number];

/** `*` values are dropped, then the outbound's tags fill the keys left free. */
function resolveWildcards(destination: TagMap | undefined, outboundTags: TagMap): TagMap {
  const resolved: TagMap = {};
  for (const [key, value] of Object.entries(destination ?? {})) if (value !== WILDCARD) resolved[key] = value;
  for (const [key, value] of Object.entries(outboundTags)) if (!Object.hasOwn(resolved, key)) resolved[key] = value;
  return resolved;
}

const hasTags = (tags: TagMap | undefined): tags is TagMap => tags !== undefined && Object.keys(tags).length > 0;

const resolveSplit = (split: TrafficRouteSplit[] | undefined, outboundTags: TagMap): TrafficRouteSplit[] | undefined =>
  split?.map((entry) => ({ ...entry, destination: resolveWildcards(entry.destination, outboundTags) }));

/** A copy of the route's conf with every destination resolved for one outbound. */
export function resolveRouteConf(conf: TrafficRouteConf | undefined, outboundTags: TagMap): TrafficRouteConf {
  const source: Partial<TrafficRouteConf> = conf ?? {};
  return {
    ...source,
    destination: hasTags(source.destination) ? resolveWildcards(source.destination, outboundTags) : source.destination,
    split: resolveSplit(source.split, outboundTags),
    http: source.http?.map((route) => ({
      ...route,
      destination: hasTags(route.destination) ? resolveWildcards(route.destination, outboundTags) : route.destination,
      split: resolveSplit(route.split, outboundTags),
    })),
  };
}

// Many proxies share a route and outbound tags: each resolution is made once per indexed route.
const resolvedByRoute = new WeakMap<IndexedPolicy<'TrafficRoute'>, Map<string, TrafficRouteConf>>();

/** `resolveRouteConf` of an indexed route, shared by every proxy with the same outbound tags: read-only. */
export function resolvedRouteConfFor(route: IndexedPolicy<'TrafficRoute'>, outboundTags: TagMap): TrafficRouteConf {
  let byTags = resolvedByRoute.get(route);
  if (!byTags) {
    byTags = new Map();
    resolvedByRoute.set(route, byTags);
  }
  const tagsKey = JSON.stringify(Object.entries(outboundTags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  let resolved = byTags.get(tagsKey);
  if (!resolved) {
    resolved = resolveRouteConf(route.policy.spec.conf, outboundTags);
    byTags.set(tagsKey, resolved);
  }
  return resolved;
}

/** `destination` is a one-entry split of weight 1. */
export function splitWithDestination(target: { split?: TrafficRouteSplit[] | undefined; destination?: TagMap | undefined }): TrafficRouteSplit[] {
  if (hasTags(target.destination)) return [{ weight: 1, destination: target.destination }];
  return target.split ?? [];
}

/** Per reached service, the distinct tag sets its endpoints are selected by. */
export interface DestinationEntry {
  readonly service: string;
  readonly tagSets: readonly TagMap[];
}

const sameTags = (a: TagMap, b: TagMap): boolean => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
};

/** Collects destination tag sets by service, in order of first appearance. */
export class DestinationMapBuilder {
  private readonly byService = new Map<string, TagMap[]>();

  add(service: string, tags: TagMap): void {
    const tagSets = this.byService.get(service);
    if (!tagSets) this.byService.set(service, [tags]);
    else if (!tagSets.some((known) => sameTags(known, tags))) tagSets.push(tags);
  }

  /** Adds every split destination of a resolved route (conf level only, as the reference); those without a service are skipped. */
  addRoute(conf: TrafficRouteConf): void {
    for (const { destination } of splitWithDestination(conf)) {
      const service = destination?.[SERVICE_TAG];
      if (destination && service !== undefined) this.add(service, destination);
    }
  }

  get services(): IterableIterator<string> {
    return this.byService.keys();
  }

  build(): DestinationEntry[] {
    return [...this.byService].map(([service, tagSets]) => ({ service, tagSets }));
  }
}
