// Query filters of resource lists (docs/api.md, Lists): `name`, `tag`, `gateway`, parsed into the
// store's list filter, which the store evaluates where its data is.
import { invalidResource, type AnyKind } from '@mesh/model';
import type { ListFilter } from '@mesh/store';
import type { Request } from 'express';
import { queryValues } from './query.js';

export type { ListFilter } from '@mesh/store';

/** `tag=key:value` (split at the first ':'; repeated keys: the last wins; no ':' ignored). */
function parseTagFilter(values: string[]): Record<string, string> {
  const wanted: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf(':');
    if (at === -1) continue;
    // An own data property, whatever the key (`__proto__` included).
    Object.defineProperty(wanted, value.slice(0, at), { value: value.slice(at + 1), enumerable: true, writable: true, configurable: true });
  }
  return wanted;
}

const GATEWAY_FILTERS: Record<string, ListFilter['gateway']> = { true: 'any', false: 'none', builtin: 'builtin', delegated: 'delegated' };

/**
 * The filters of a list request. `routeTemplate` names the route in the reference's error for a
 * bad `gateway` value (`/meshes/{mesh}/dataplanes.gateway`).
 */
export function parseListFilter(req: Request, kind: AnyKind, routeTemplate: string): ListFilter {
  const filter: ListFilter = {};
  // Express parses the query string again on every read of `req.query`.
  const query = req.query;
  const name = queryValues(query.name)[0];
  if (name) filter.nameContains = name;

  if (kind.tagSets) {
    const wanted = parseTagFilter(queryValues(query.tag));
    if (Object.keys(wanted).length > 0) filter.tags = wanted;
  }

  if (kind.gatewayType) {
    const gateway = (queryValues(query.gateway)[0] ?? '').toLowerCase();
    if (gateway !== '') {
      if (!Object.hasOwn(GATEWAY_FILTERS, gateway)) {
        throw invalidResource([{ field: `${routeTemplate}.gateway`, message: `shoud use \`true\`, \`false\`, 'builtin' or 'delegated' instead of ${gateway}` }]);
      }
      filter.gateway = GATEWAY_FILTERS[gateway];
    }
  }
  return filter;
}

/** Whether a list request filters at all (unfiltered pages are served from a cache). */
export const isFiltered = (filter: ListFilter): boolean => filter.nameContains !== undefined || filter.tags !== undefined || filter.gateway !== undefined;
