// The CRUD surface of every kind, generated from the registry (docs/api.md, Resources and Lists).
import { invalidResource, KINDS, methodNotAllowed, resourceNotFound, type AnyKind } from '@mesh/model';
import type { Request, Response } from 'express';
import { callerOf, requireAccess } from './access.js';
import { parseJsonBody, readBodyText } from './body.js';
import type { ApiContext } from './context.js';
import { sendJson } from './errors.js';
import { withOperation } from './handler.js';
import { isFiltered, parseListFilter } from './list-filters.js';
import { ListPageCache, sendCollection } from './page-cache.js';
import { collectionJson, nextPageUrl, parsePage } from './pagination.js';
import { kubernetesResourceJson, resourceJson } from './resource-json.js';
import type { Params, RouteTable } from './route-table.js';

const FORMATS = new Set(['', 'universal', 'k8s', 'kubernetes']);

/** Collection and entity paths of a kind: `/meshes/{mesh}/traffic-routes`, `/zones`. */
export function kindPaths(kind: AnyKind): { list: string; entity: string } {
  const list = kind.scope === 'mesh' ? `/meshes/{mesh}/${kind.path}` : `/${kind.path}`;
  return { list, entity: `${list}/{name}` };
}

export function addCrudRoutes(table: RouteTable, ctx: ApiContext): void {
  const pages = new ListPageCache(ctx.manager.store);
  for (const kind of KINDS) {
    // Computed kinds have their own views (views/insights.ts).
    if (kind.computed) continue;
    const { list, entity } = kindPaths(kind);
    table.add({ method: 'GET', path: list, handler: withOperation('list', (req, res, params) => listResources(ctx, pages, kind, list, req, res, params.mesh)) });
    if (kind.scope === 'mesh') {
      // The same entities across all meshes (`/traffic-routes`).
      table.add({ method: 'GET', path: `/${kind.path}`, handler: withOperation('list', (req, res) => listResources(ctx, pages, kind, `/${kind.path}`, req, res, undefined)) });
    }
    table.add({ method: 'GET', path: entity, handler: withOperation('get', (req, res, params) => getResource(ctx, kind, req, res, params)) });
    table.add({ method: 'PUT', path: entity, handler: withOperation('process', (req, res, params) => putResource(ctx, kind, req, res, params)) });
    table.add({ method: 'DELETE', path: entity, handler: withOperation('delete', (req, res, params) => deleteResource(ctx, kind, req, res, params)) });
  }
}

const meshOf = (kind: AnyKind, params: Params) => (kind.scope === 'mesh' ? params.mesh! : '');

async function listResources(ctx: ApiContext, pages: ListPageCache, kind: AnyKind, template: string, req: Request, res: Response, mesh: string | undefined) {
  requireAccess(callerOf(req), kind);
  const page = parsePage(req);
  const filter = parseListFilter(req, kind, template);
  const load = async () => {
    const found = await ctx.manager.list({ type: kind.name, ...(mesh !== undefined ? { mesh } : {}), ...filter, ...page });
    return { items: found.items.map((r) => resourceJson(kind, r)), total: found.total };
  };
  if (isFiltered(filter)) {
    const found = await load();
    sendJson(res, 200, collectionJson(found.items, found.total, nextPageUrl(req, page, found.total)));
    return;
  }
  const found = await pages.page(kind.name, `${mesh ?? '*'}\u0000${page.offset}\u0000${page.size}`, load);
  sendCollection(res, found.items, found.total, nextPageUrl(req, page, found.total));
}

async function getResource(ctx: ApiContext, kind: AnyKind, req: Request, res: Response, params: Params) {
  requireAccess(callerOf(req), kind);
  const format = typeof req.query.format === 'string' ? req.query.format : '';
  if (!FORMATS.has(format)) {
    throw invalidResource([{ field: '', message: '"format" must be one of ["k8s", "kubernetes", "universal"]' }], 'invalid format');
  }
  const resource = await ctx.manager.get(kind, meshOf(kind, params), params.name!);
  if (!resource) throw resourceNotFound();
  sendJson(res, 200, format === 'k8s' || format === 'kubernetes' ? kubernetesResourceJson(kind, resource) : resourceJson(kind, resource));
}

async function putResource(ctx: ApiContext, kind: AnyKind, req: Request, res: Response, params: Params) {
  // Refused before the body is read: a read-only kind gets 405 whatever was sent.
  if (!ctx.manager.isWritableViaApi(kind)) throw methodNotAllowed();
  const caller = callerOf(req);
  const body = parseJsonBody(await readBodyText(req), kind.name);
  const result = await ctx.manager.apply(kind, { mesh: meshOf(kind, params), name: params.name! }, body, { caller });
  sendJson(res, result.created ? 201 : 200, result.warnings.length > 0 ? JSON.stringify({ warnings: result.warnings }) : '{}');
}

async function deleteResource(ctx: ApiContext, kind: AnyKind, req: Request, res: Response, params: Params) {
  if (!ctx.manager.isWritableViaApi(kind)) throw methodNotAllowed();
  const caller = callerOf(req);
  await ctx.manager.remove(kind, { mesh: meshOf(kind, params), name: params.name! }, { caller });
  sendJson(res, 200, '{}');
}
