// `/meshes/{mesh}/<policy-path>/{name}/_resources/dataplanes` (and its alias `-resources`): the
// dataplanes a policy selects (docs/api.md, Meta and insight endpoints). As the reference: a
// selector policy selects by its selectors, a source/destination policy by any of its sources or
// destinations; a selector matches a dataplane when it matches one inbound's tags or the
// gateway's. A targetRef policy selects by its top-level targetRef.
import {
  dataplaneKind,
  dataplaneTagSets,
  policyKinds,
  resourceNotFound,
  targetRefPolicyKinds,
  type AnyKind,
  type DataplaneSpec,
  type Selector,
  type TargetRefPolicyKind,
} from '@mesh/model';
import { selectorMatches } from '@mesh/policy-matcher';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { callerOf, requireAccess } from '../access.js';
import type { ApiContext } from '../context.js';
import { kindPaths } from '../crud.js';
import { sendJson } from '../errors.js';
import { withOperation } from '../handler.js';
import { exampleOf, exampleParams } from '../openapi/examples.js';
import { component } from '../openapi/schemas.js';
import { nextPageUrl, pageOf, parsePage } from '../pagination.js';
import { NAME_FILTER, PAGE_PARAMETERS } from '../route-doc.js';
import type { Params, RouteTable } from '../route-table.js';
import { nameFilter } from '../query.js';

const TITLE = 'Could not retrieve policy';

type SelectingSpec = { selectors?: Selector[]; sources?: Selector[]; destinations?: Selector[] };

function selectsDataplane(selectors: readonly Selector[], dataplane: DataplaneSpec): boolean {
  const tagSets = dataplaneTagSets(dataplane);
  return selectors.some(({ match = {} }) => Object.keys(match).length === 0 || tagSets.some((tags) => selectorMatches(match, tags)));
}

/**
 * Whether a targetRef policy selects a dataplane by name: its top-level targetRef picks an inbound
 * or gateway listener of it (docs/matching.md, targetRef policies), as the proxy configuration has it.
 */
async function targetRefSelection(ctx: ApiContext, kind: TargetRefPolicyKind, mesh: string, policy: string): Promise<(dataplane: string) => boolean> {
  await ctx.proxyConfigs.settled();
  const proxies = ctx.proxyConfigs.mesh(mesh);
  return (dataplane) => proxies?.targetRefPolicySelects(kind, policy, dataplane) ?? false;
}

async function listSelectedDataplanes(ctx: ApiContext, kind: AnyKind, req: Request, res: Response, params: Params) {
  requireAccess(callerOf(req), kind);
  const page = parsePage(req, TITLE);
  const policy = await ctx.manager.get(kind, params.mesh!, params.name!);
  if (!policy) throw resourceNotFound(TITLE);
  const spec = JSON.parse(policy.spec) as SelectingSpec;
  const selectors = kind.selection === 'selectors' ? (spec.selectors ?? []) : [...(spec.sources ?? []), ...(spec.destinations ?? [])];
  const selectsTargetRef = kind.targetRefPolicy ? await targetRefSelection(ctx, kind.name as TargetRefPolicyKind, params.mesh!, params.name!) : undefined;
  const name = nameFilter(req);
  // Selection by a policy's selectors is this view's own question, not a list filter: it pages what it selects.
  const candidates = await ctx.manager.list({ type: dataplaneKind.name, mesh: params.mesh!, ...(name ? { nameContains: name } : {}), offset: 0, size: 0 });
  const selected = candidates.items.filter((dataplane) =>
    selectsTargetRef ? selectsTargetRef(dataplane.name) : selectsDataplane(selectors, JSON.parse(dataplane.spec) as DataplaneSpec),
  );
  const found = pageOf(selected, page, (dataplane) => dataplane);
  const items = found.items.map((dataplane) => ({ type: dataplaneKind.name, mesh: dataplane.mesh, name: dataplane.name }));
  const next = nextPageUrl(req, page, found.listed);
  // `next` is left out on the last page, as the reference's response type omits it.
  sendJson(res, 200, JSON.stringify({ total: selected.length, items, ...(next !== null ? { next } : {}) }));
}

const SelectedDataplanesSchema = component(
  'SelectedDataplanes',
  z.object({
    total: z.number().int(),
    items: z.array(z.object({ type: z.literal(dataplaneKind.name), mesh: z.string(), name: z.string() })),
    next: z.string().optional().meta({ description: 'The URL of the next page; left out on the last one.' }),
  }),
);

export function addPolicyDataplanesRoutes(table: RouteTable, ctx: ApiContext): void {
  for (const kind of [...policyKinds(), ...targetRefPolicyKinds()]) {
    const example = exampleOf(kind);
    const selection = kind.targetRefPolicy
      ? 'By its top-level targetRef: the proxies with an inbound or gateway listener it selects. Paged.'
      : 'By its selectors (or any of its sources and destinations): the proxies with an inbound or gateway whose tags match. Paged.';
    const handler = withOperation('get', (req, res, params) => listSelectedDataplanes(ctx, kind, req, res, params));
    const sharedDoc = {
      tag: kind.displayName,
      query: [...PAGE_PARAMETERS, NAME_FILTER],
      responses: { 200: { description: 'A page of proxies.', schema: SelectedDataplanesSchema } },
      errors: [400, 404] as const,
      ...(example ? { example: { params: exampleParams(example) } } : {}),
    };
    const entity = kindPaths(kind).entity;
    table.add({
      method: 'GET',
      path: `${entity}/_resources/dataplanes`,
      doc: { summary: `List the proxies a ${kind.singularDisplayName} selects`, description: selection, ...sharedDoc },
      handler,
    });
    // The reference's command-line client asks this path (`inspect ... --new-api`).
    table.add({
      method: 'GET',
      path: `${entity}/-resources/dataplanes`,
      doc: { summary: `List the proxies a ${kind.singularDisplayName} selects (alias of \`_resources\`)`, description: `The same answer as \`_resources/dataplanes\`. ${selection}`, ...sharedDoc },
      handler,
    });
  }
}
