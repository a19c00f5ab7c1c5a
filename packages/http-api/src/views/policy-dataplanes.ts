// `/meshes/{mesh}/<policy-path>/{name}/_resources/dataplanes`: the dataplanes a policy selects
// (docs/api.md, Meta and insight endpoints). As the reference: a selector policy selects by its selectors, a
// source/destination policy by any of its sources or destinations; a selector matches a
// dataplane when it matches one inbound's tags or the gateway's.
import { dataplaneKind, dataplaneTagSets, DomainError, policyKinds, resourceNotFound, type AnyKind, type DataplaneSpec, type Selector } from '@mesh/model';
import { selectorMatches } from '@mesh/policy-matcher';
import type { Request, Response } from 'express';
import { callerOf, requireAccess } from '../access.js';
import type { ApiContext } from '../context.js';
import { kindPaths } from '../crud.js';
import { sendJson } from '../errors.js';
import { withOperation } from '../handler.js';
import { nextPageUrl, parsePage } from '../pagination.js';
import type { Params, RouteTable } from '../route-table.js';
import { nameFilter } from '../query.js';

const TITLE = 'Could not retrieve policy';

type SelectingSpec = { selectors?: Selector[]; sources?: Selector[]; destinations?: Selector[] };

function selectsDataplane(selectors: readonly Selector[], dataplane: DataplaneSpec): boolean {
  const tagSets = dataplaneTagSets(dataplane);
  return selectors.some(({ match = {} }) => Object.keys(match).length === 0 || tagSets.some((tags) => selectorMatches(match, tags)));
}

async function listSelectedDataplanes(ctx: ApiContext, kind: AnyKind, req: Request, res: Response, params: Params) {
  requireAccess(callerOf(req), kind);
  const page = parsePage(req, TITLE);
  const policy = await ctx.manager.get(kind, params.mesh!, params.name!);
  if (!policy) throw resourceNotFound(TITLE);
  const spec = JSON.parse(policy.spec) as SelectingSpec;
  const selectors = kind.selection === 'selectors' ? (spec.selectors ?? []) : [...(spec.sources ?? []), ...(spec.destinations ?? [])];
  const name = nameFilter(req);
  // Selection by a policy's selectors is this view's own question, not a list filter: it pages what it selects.
  const candidates = await ctx.manager.list({ type: dataplaneKind.name, mesh: params.mesh!, ...(name ? { nameContains: name } : {}), offset: 0, size: 0 });
  const selected = candidates.items.filter((dataplane) => selectsDataplane(selectors, JSON.parse(dataplane.spec) as DataplaneSpec));
  const pageItems = page.size === 0 ? selected.slice(page.offset) : selected.slice(page.offset, page.offset + page.size);
  const items = pageItems.map((dataplane) => ({ type: dataplaneKind.name, mesh: dataplane.mesh, name: dataplane.name }));
  const next = nextPageUrl(req, page, selected.length);
  // `next` is left out on the last page, as the reference's response type omits it.
  sendJson(res, 200, JSON.stringify({ total: selected.length, items, ...(next !== null ? { next } : {}) }));
}

export function addPolicyDataplanesRoutes(table: RouteTable, ctx: ApiContext): void {
  for (const kind of policyKinds()) {
    table.add({
      method: 'GET',
      path: `${kindPaths(kind).entity}/_resources/dataplanes`,
      handler: withOperation('get', (req, res, params) => listSelectedDataplanes(ctx, kind, req, res, params)),
    });
  }
}
