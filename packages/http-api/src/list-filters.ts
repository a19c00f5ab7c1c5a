// Query filters of resource lists (rest-contract §4.3): `name`, `tag`, `gateway`.
import { invalidResource, type AnyKind } from '@mesh/model';
import type { StoredResource } from '@mesh/store';
import type { Request } from 'express';
import { queryValues } from './query.js';

export interface ListFilter {
  nameContains?: string;
  where?: (resource: StoredResource) => boolean;
}

/** `tag=key:value` (split at the first ':'; repeated keys: the last wins; no ':' ignored). */
function parseTagFilter(values: string[]): Map<string, string> {
  const wanted = new Map<string, string>();
  for (const value of values) {
    const at = value.indexOf(':');
    if (at === -1) continue;
    wanted.set(value.slice(0, at), value.slice(at + 1));
  }
  return wanted;
}

/** One tag set holds every wanted key, each value containing the wanted one (or wanted `*`). */
const tagSetMatches = (tags: Record<string, string>, wanted: Map<string, string>): boolean =>
  [...wanted].every(([key, value]) => {
    // Own keys only: `constructor` or `__proto__` are no tags of anything.
    const actual = Object.hasOwn(tags, key) ? tags[key] : undefined;
    return typeof actual === 'string' && (value === '*' || actual.includes(value));
  });

const GATEWAY_FILTERS = new Set(['true', 'false', 'builtin', 'delegated']);

/**
 * The filters of a list request. `routeTemplate` names the route in the reference's error for a
 * bad `gateway` value (`/meshes/{mesh}/dataplanes.gateway`).
 */
export function parseListFilter(req: Request, kind: AnyKind, routeTemplate: string): ListFilter {
  const filter: ListFilter = {};
  const name = queryValues(req.query.name)[0];
  if (name) filter.nameContains = name;
  const predicates: Array<(spec: Record<string, unknown>) => boolean> = [];

  const tagSets = kind.tagSets;
  if (tagSets) {
    const wanted = parseTagFilter(queryValues(req.query.tag));
    if (wanted.size > 0) predicates.push((spec) => tagSets(spec).some((tags) => tagSetMatches(tags, wanted)));
  }

  const gatewayType = kind.gatewayType;
  if (gatewayType) {
    const gateway = (queryValues(req.query.gateway)[0] ?? '').toLowerCase();
    if (gateway !== '' && !GATEWAY_FILTERS.has(gateway)) {
      throw invalidResource([{ field: `${routeTemplate}.gateway`, message: `shoud use \`true\`, \`false\`, 'builtin' or 'delegated' instead of ${gateway}` }]);
    }
    if (gateway === 'true') predicates.push((spec) => gatewayType(spec) !== undefined);
    else if (gateway === 'false') predicates.push((spec) => gatewayType(spec) === undefined);
    else if (gateway !== '') predicates.push((spec) => gatewayType(spec) === gateway);
  }

  if (predicates.length > 0) {
    filter.where = (resource) => {
      const spec = JSON.parse(resource.spec) as Record<string, unknown>;
      return predicates.every((matches) => matches(spec));
    };
  }
  return filter;
}
