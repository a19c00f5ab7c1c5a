// The CRUD surface of every kind, generated from the registry (rest-contract §3, §4).
import {
  checkMeshName,
  checkResourceName,
  decodeSpec,
  DomainError,
  invalidResource,
  isDnsLabel,
  KINDS,
  NAME_MESSAGES,
  type AnyKind,
  type Violation,
} from '@mesh/model';
import type { StoredResource } from '@mesh/store';
import type { Request, Response } from 'express';
import { identifyCaller, requireAccess } from './access.js';
import { parseJsonBody, readBodyText } from './body.js';
import { isWritable, type ApiContext } from './context.js';
import { badRequest, methodNotAllowed, OPERATION_TITLES, sendJson } from './errors.js';
import { withOperation } from './handler.js';
import { parseListFilter } from './list-filters.js';
import { ListPageCache, sendCollection } from './page-cache.js';
import { collectionJson, nextPageUrl, parsePage } from './pagination.js';
import { kubernetesResourceJson, resourceJson } from './resource-json.js';
import type { Params, RouteTable } from './route-table.js';

const FORMATS = new Set(['', 'universal', 'k8s', 'kubernetes']);
const MAX_SYNCED_NAME = 253;

/** Collection and entity paths of a kind: `/meshes/{mesh}/traffic-routes`, `/zones`. */
export function kindPaths(kind: AnyKind): { list: string; entity: string } {
  const list = kind.scope === 'mesh' ? `/meshes/{mesh}/${kind.path}` : `/${kind.path}`;
  return { list, entity: `${list}/{name}` };
}

export function addCrudRoutes(table: RouteTable, ctx: ApiContext): void {
  const pages = new ListPageCache(ctx.manager.store);
  for (const kind of KINDS) {
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
  requireAccess(identifyCaller(req, ctx.access), kind);
  const page = parsePage(req);
  const filter = parseListFilter(req, kind, template);
  const load = async () => {
    const found = await ctx.manager.list({ type: kind.name, ...(mesh !== undefined ? { mesh } : {}), ...filter, ...page });
    return { items: found.items.map((r) => resourceJson(kind, r)), total: found.total };
  };
  const unfiltered = filter.nameContains === undefined && filter.where === undefined;
  if (!unfiltered) {
    const found = await load();
    sendJson(res, 200, collectionJson(found.items, found.total, nextPageUrl(req, page, found.total)));
    return;
  }
  const found = await pages.page(kind.name, `${mesh ?? '*'}\u0000${page.offset}\u0000${page.size}`, load);
  sendCollection(res, found.items, found.total, nextPageUrl(req, page, found.total));
}

async function getResource(ctx: ApiContext, kind: AnyKind, req: Request, res: Response, params: Params) {
  requireAccess(identifyCaller(req, ctx.access), kind);
  const format = typeof req.query.format === 'string' ? req.query.format : '';
  if (!FORMATS.has(format)) {
    throw new DomainError('bad_request', 'Resource is not valid', {
      title: 'invalid format',
      violations: [{ field: '', message: '"format" must be one of ["k8s", "kubernetes", "universal"]' }],
    });
  }
  const resource = await ctx.manager.get(kind, meshOf(kind, params), params.name!);
  if (!resource) throw new DomainError('not_found', 'Not found');
  sendJson(res, 200, format === 'k8s' || format === 'kubernetes' ? kubernetesResourceJson(kind, resource) : resourceJson(kind, resource));
}

interface BodyMeta {
  type: string;
  mesh: string;
  name: string;
}

/** The meta fields of a body; a meta field of the wrong JSON type is a decode failure. */
function readMeta(kind: AnyKind, body: unknown): BodyMeta {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest(`invalid ${kind.name} object: 'expected a JSON object'`);
  }
  const record = body as Record<string, unknown>;
  const text = (field: 'type' | 'mesh' | 'name'): string => {
    const value = record[field];
    if (value === undefined || value === null) return '';
    if (typeof value !== 'string') throw badRequest(`invalid ${kind.name} object: '${field}: expected a string, got ${typeof value}'`);
    return value;
  };
  return { type: text('type'), mesh: text('mesh'), name: text('name') };
}

/** Meta checks, accumulated in the reference's order (rest-contract §3.3 step 5). */
function metaViolations(ctx: ApiContext, kind: AnyKind, params: Params, meta: BodyMeta, creating: boolean): Violation[] {
  const violations: Violation[] = [];
  const name = params.name!;
  if (name !== meta.name) violations.push({ field: 'name', message: 'name from the URL has to be the same as in body' });
  if (ctx.mode === 'zone' && ctx.zoneName !== undefined && `${ctx.zoneName}.${name}`.length >= MAX_SYNCED_NAME) {
    violations.push({ field: 'name', message: 'the length of the name must be shorter' });
  }
  if (!kind.acceptedTypes.includes(meta.type)) violations.push({ field: 'type', message: 'type from the URL has to be the same as in body' });
  if (kind.scope === 'mesh' && params.mesh !== meta.mesh) violations.push({ field: 'mesh', message: 'mesh from the URL has to be the same as in body' });
  const nameProblem = checkResourceName(meta.name, creating);
  if (nameProblem) violations.push({ field: 'name', message: nameProblem });
  else if (creating && kind.nameIsDnsLabel && !isDnsLabel(meta.name)) violations.push({ field: 'name', message: NAME_MESSAGES.dnsLabel });
  if (kind.scope === 'mesh') {
    const meshProblem = checkMeshName(meta.mesh);
    if (meshProblem) violations.push({ field: 'mesh', message: meshProblem });
  }
  return violations;
}

async function putResource(ctx: ApiContext, kind: AnyKind, req: Request, res: Response, params: Params) {
  if (!isWritable(ctx, kind)) throw methodNotAllowed();
  const caller = identifyCaller(req, ctx.access);
  const body = parseJsonBody(await readBodyText(req), kind.name);
  const meta = readMeta(kind, body);
  const decoded = decodeSpec(kind, body);
  if (!decoded.ok) throw badRequest(`invalid ${kind.name} object: '${decoded.message}'`);
  const specViolations = kind.validate(decoded.spec);
  if (specViolations.length > 0) throw invalidResource(specViolations);

  const mesh = meshOf(kind, params);
  const current = await ctx.manager.get(kind, mesh, params.name!);
  const violations = metaViolations(ctx, kind, params, meta, current === undefined);
  if (violations.length > 0) throw invalidResource(violations);
  requireAccess(caller, kind);

  const result = current
    ? await withTitle('update', () => ctx.manager.update(kind, current, decoded.spec))
    : await withTitle('create', () => ctx.manager.create(kind, mesh, params.name!, decoded.spec));
  sendJson(res, current ? 200 : 201, result.warnings.length > 0 ? JSON.stringify({ warnings: result.warnings }) : '{}');
}

async function deleteResource(ctx: ApiContext, kind: AnyKind, req: Request, res: Response, params: Params) {
  if (!isWritable(ctx, kind)) throw methodNotAllowed();
  const caller = identifyCaller(req, ctx.access);
  const current: StoredResource | undefined = await ctx.manager.get(kind, meshOf(kind, params), params.name!);
  if (!current) throw new DomainError('not_found', 'Not found');
  requireAccess(caller, kind);
  await ctx.manager.delete(kind, current);
  sendJson(res, 200, '{}');
}

/** Manager errors during a create or update carry that operation's title. */
async function withTitle<T>(operation: 'create' | 'update', write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof DomainError && error.title === undefined) {
      throw new DomainError(error.code, error.message, { title: OPERATION_TITLES[operation], violations: error.violations });
    }
    throw error;
  }
}
