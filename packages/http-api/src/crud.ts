// The CRUD surface of every kind, generated from the registry (docs/api.md, Resources and Lists).
import { invalidResource, isWritableViaApi, KINDS, methodNotAllowed, MODES, resourceNotFound, type AnyKind } from '@mesh/model';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { callerOf, requireAccess } from './access.js';
import { parseJsonBody, readBodyText } from './body.js';
import type { ApiContext } from './context.js';
import { sendJson } from './errors.js';
import { withOperation } from './handler.js';
import { isFiltered, parseListFilter } from './list-filters.js';
import { ListPageCache, sendCollection } from './page-cache.js';
import { collectionJson, cursorOf, nextPageUrl, parsePage } from './pagination.js';
import { exampleBody, exampleListParams, exampleOf, exampleParams } from './openapi/examples.js';
import { collectionOf, component, kindSchemas, WriteResultSchema } from './openapi/schemas.js';
import { NAME_FILTER, PAGE_PARAMETERS, type QueryParameter, type RouteDoc } from './route-doc.js';
import { kubernetesResourceJson, resourceJson } from './resource-json.js';
import type { Params, RouteTable } from './route-table.js';

const FORMATS = new Set(['', 'universal', 'k8s', 'kubernetes']);

/** Collection and entity paths of a kind: `/meshes/{mesh}/traffic-routes`, `/zones`. */
export function kindPaths(kind: AnyKind): { list: string; entity: string } {
  const list = kind.scope === 'mesh' ? `/meshes/{mesh}/${kind.path}` : `/${kind.path}`;
  return { list, entity: `${list}/{name}` };
}

export function addCrudRoutes(table: RouteTable, ctx: ApiContext): void {
  const pages = new ListPageCache(ctx.manager.reader);
  for (const kind of KINDS) {
    // Computed kinds have their own views (views/insights.ts).
    if (kind.computed) continue;
    const { list, entity } = kindPaths(kind);
    const docs = crudDocs(kind);
    // What admins alone may read is answered per caller.
    const cached = kind.adminOnly ? {} : { answerChangesWith: [kind.name] };
    table.add({ method: 'GET', path: list, doc: docs.list, ...cached, handler: withOperation('list', (req, res, params) => listResources(ctx, pages, kind, list, req, res, params.mesh)) });
    if (kind.scope === 'mesh') {
      // The same entities across all meshes (`/traffic-routes`).
      table.add({
        method: 'GET',
        path: `/${kind.path}`,
        doc: docs.listAcrossMeshes,
        ...cached,
        handler: withOperation('list', (req, res) => listResources(ctx, pages, kind, `/${kind.path}`, req, res, undefined)),
      });
    }
    table.add({ method: 'GET', path: entity, doc: docs.get, ...cached, handler: withOperation('get', (req, res, params) => getResource(ctx, kind, req, res, params)) });
    table.add({ method: 'PUT', path: entity, doc: docs.put, handler: withOperation('process', (req, res, params) => putResource(ctx, kind, req, res, params)) });
    table.add({ method: 'DELETE', path: entity, doc: docs.delete, handler: withOperation('delete', (req, res, params) => deleteResource(ctx, kind, req, res, params)) });
  }
}

/** The list filters a kind's lists take (docs/api.md, Lists). */
export function listFilterParameters(kind: AnyKind): QueryParameter[] {
  const filters: QueryParameter[] = [...PAGE_PARAMETERS, NAME_FILTER];
  if (kind.tagSets) {
    filters.push({
      name: 'tag',
      description: 'Only the items with a tag set holding the key with a value containing the given one (`*`: any value), as `key:value`; repeat for several tags.',
      schema: z.string().meta({ example: 'mesh.io/service:web' }),
      repeated: true,
    });
  }
  if (kind.gatewayType) {
    filters.push({ name: 'gateway', description: 'Only the proxies with a gateway (`true`), without one (`false`), or with one of this type.', schema: z.enum(['true', 'false', 'builtin', 'delegated']) });
  }
  return filters;
}

/** The modes whose API writes a kind, for its documentation. */
function writtenBy(kind: AnyKind): string {
  const modes = MODES.filter((mode) => isWritableViaApi(kind, mode));
  return modes.length === MODES.length ? '' : ` Written through the API of a ${modes.join(' or ')} control plane; the others answer 405.`;
}

function crudDocs(kind: AnyKind): Record<'list' | 'listAcrossMeshes' | 'get' | 'put' | 'delete', RouteDoc> {
  const schemas = kindSchemas(kind);
  const example = exampleOf(kind);
  const params = example && exampleParams(example);
  const tag = kind.displayName;
  const one = kind.singularDisplayName;
  const list = component(`${kind.name}List`, collectionOf(schemas.resource));
  const secret = kind.adminOnly ? ' Admins only.' : '';
  const listErrors = kind.adminOnly ? ([400, 403] as const) : ([400] as const);
  const docs = {
    list: {
      summary: kind.scope === 'mesh' ? `List the ${kind.displayName} of a mesh` : `List ${kind.displayName}`,
      description: `Paged, in name order.${secret}`,
      tag,
      query: listFilterParameters(kind),
      responses: { 200: { description: `A page of ${kind.displayName}.`, schema: list } },
      errors: listErrors,
      ...(example ? { example: { params: exampleListParams(example) } } : {}),
    },
    listAcrossMeshes: {
      summary: `List the ${kind.displayName} of every mesh`,
      description: `Paged, in mesh and name order.${secret}`,
      tag,
      query: listFilterParameters(kind),
      responses: { 200: { description: `A page of ${kind.displayName}.`, schema: list } },
      errors: listErrors,
      ...(example ? { example: {} } : {}),
    },
    get: {
      summary: `Get a ${one}`,
      description: `As stored, in its normalised form.${secret}`,
      tag,
      query: [{ name: 'format', description: '`k8s` (or `kubernetes`) returns the Kubernetes shape; `universal` (the default) the flat one.', schema: z.enum(['universal', 'k8s', 'kubernetes']) }],
      responses: { 200: { description: `The ${one}.`, schema: z.union([schemas.resource, schemas.kubernetes]) } },
      errors: kind.adminOnly ? [400, 403, 404] : [400, 404],
      ...(params ? { example: { params } } : {}),
    },
    put: {
      summary: `Create or update a ${one}`,
      description: `The body's \`name\`${kind.scope === 'mesh' ? ' and `mesh`' : ''} must be the path's. Every violated rule is reported at once, with its field path.${secret}${writtenBy(kind)}`,
      tag,
      body: schemas.body,
      responses: {
        201: { description: 'Created.', schema: WriteResultSchema },
        200: { description: 'Updated.', schema: WriteResultSchema },
      },
      errors: [400, 403, 405, 409, 413, 415, 503],
      ...(example && params ? { example: { params, body: exampleBody(kind, example) } } : {}),
    },
    delete: {
      summary: `Delete a ${one}`,
      description: `Answers \`{}\`.${secret}${writtenBy(kind)}`,
      tag,
      responses: { 200: { description: 'Deleted.', schema: WriteResultSchema } },
      errors: [400, 403, 404, 405, 503],
      ...(params ? { example: { params } } : {}),
    },
  } satisfies Record<string, RouteDoc>;
  if (!kind.readOnly) return docs;
  // Runtime state: the control plane writes it; the API only shows it.
  const refused = (summary: string): RouteDoc => ({ summary, description: 'Runtime state is written by the control plane itself; the API always answers 405.', tag, responses: {}, errors: [405] });
  return { ...docs, put: refused(`Refused: a ${one} is not written through the API`), delete: refused(`Refused: a ${one} is not deleted through the API`) };
}

const meshOf = (kind: AnyKind, params: Params) => (kind.scope === 'mesh' ? params.mesh! : '');

async function listResources(ctx: ApiContext, pages: ListPageCache, kind: AnyKind, template: string, req: Request, res: Response, mesh: string | undefined) {
  requireAccess(callerOf(req), kind);
  const page = parsePage(req);
  const filter = parseListFilter(req, kind, template);
  const load = async () => {
    const found = await ctx.manager.list({ type: kind.name, ...(mesh !== undefined ? { mesh } : {}), ...filter, ...page });
    const last = found.items.at(-1);
    return { items: found.items.map((r) => resourceJson(kind, r)), listed: { start: found.start, total: found.total, last: last && { mesh: last.mesh, name: last.name } } };
  };
  if (isFiltered(filter)) {
    const found = await load();
    sendJson(res, 200, collectionJson(found.items, found.listed.total, nextPageUrl(req, page, found.listed)));
    return;
  }
  const after = page.after ? cursorOf(page.after) : '';
  const found = await pages.page(kind.name, `${mesh ?? '*'}\u0000${after}\u0000${page.offset}\u0000${page.size}`, load);
  sendCollection(res, found.items, found.listed.total, nextPageUrl(req, page, found.listed));
}

async function getResource(ctx: ApiContext, kind: AnyKind, req: Request, res: Response, params: Params) {
  requireAccess(callerOf(req), kind);
  const requested = req.query.format;
  const format = typeof requested === 'string' ? requested : '';
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
  const body = parseJsonBody(await readBodyText(req, ctx.limits?.maxRequestBodySize), kind.name);
  const result = await ctx.manager.apply(kind, { mesh: meshOf(kind, params), name: params.name! }, body, { caller });
  sendJson(res, result.created ? 201 : 200, result.warnings.length > 0 ? JSON.stringify({ warnings: result.warnings }) : '{}');
}

async function deleteResource(ctx: ApiContext, kind: AnyKind, req: Request, res: Response, params: Params) {
  if (!ctx.manager.isWritableViaApi(kind)) throw methodNotAllowed();
  const caller = callerOf(req);
  await ctx.manager.remove(kind, { mesh: meshOf(kind, params), name: params.name! }, { caller });
  sendJson(res, 200, '{}');
}
