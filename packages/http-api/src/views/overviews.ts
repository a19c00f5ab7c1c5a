// Overviews: a proxy or zone joined with its insight (`DataplaneOverview`, `ZoneOverview`, ...),
// at `<path>/_overview`, `<path>/{name}/_overview` and the reference's older `dataplanes+insights`
// style paths (docs/api.md, Lists). JSON is assembled from the stored texts.
import type { DataplaneStatus } from '@mesh/insights';
import { INSIGHT_LINKS, invalidResource, resourceNotFound, type InsightLink } from '@mesh/model';
import type { StoredResource } from '@mesh/store';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { callerOf, requireAccess } from '../access.js';
import type { ApiContext } from '../context.js';
import { kindPaths, listFilterParameters } from '../crud.js';
import { sendJson } from '../errors.js';
import { withOperation } from '../handler.js';
import { parseListFilter } from '../list-filters.js';
import { AssembledPages, joinItems, sendCollection } from '../page-cache.js';
import { exampleListParams, exampleOf, exampleParams } from '../openapi/examples.js';
import { collectionOf, component, kindSchemas, LabelsSchema, timestamp } from '../openapi/schemas.js';
import { nextPageUrl, pageOf, parsePage } from '../pagination.js';
import { firstQueryValue } from '../query.js';
import type { RouteDoc } from '../route-doc.js';
import type { Params, RouteTable } from '../route-table.js';

const lowerFirst = (name: string): string => name.charAt(0).toLowerCase() + name.slice(1);

const DATAPLANE = 'Dataplane';

/**
 * Each listed entity's overview, encoded, with the insight it was built with. Stored resources
 * are immutable and replaced on every write, so an item is rebuilt only when its entity or its
 * insight changed; a page is then its cached items copied together.
 */
const listItemOf = new WeakMap<StoredResource, { insight: StoredResource | undefined; bytes: Buffer }>();

function overviewListItem(link: InsightLink, entity: StoredResource, insight: StoredResource | undefined): Buffer {
  const cached = listItemOf.get(entity);
  if (cached && cached.insight === insight) return cached.bytes;
  const bytes = Buffer.from(overviewJson(link, entity, insight));
  listItemOf.set(entity, { insight, bytes });
  return bytes;
}

/**
 * `{type, mesh?, name, times, labels?, <entity>: spec, <insight>?: spec}`. `insight`
 * undefined leaves the insight key out (list items), null shows it as `{}` (a single overview).
 */
function overviewJson(link: InsightLink, entity: StoredResource, insight: StoredResource | undefined | null): string {
  const mesh = link.entity.scope === 'mesh' ? entity.mesh : link.overviewMesh;
  let json = `{"type":"${link.entity.name}Overview"`;
  if (mesh !== undefined) json += `,"mesh":${JSON.stringify(mesh)}`;
  json += `,"name":${JSON.stringify(entity.name)},"creationTime":"${entity.creationTime}","modificationTime":"${entity.modificationTime}"`;
  if (Object.keys(entity.labels).length > 0) json += `,"labels":${JSON.stringify(entity.labels)}`;
  json += `,"${lowerFirst(link.entity.name)}":${entity.spec}`;
  if (insight !== undefined) json += `,"${lowerFirst(link.insight.name)}":${insight?.spec ?? '{}'}`;
  return `${json}}`;
}

/** `status=` of a proxy list, in the spelling of the service insights' statuses. */
const PROXY_STATUSES: Readonly<Record<string, DataplaneStatus>> = { online: 'online', offline: 'offline', partially_degraded: 'partiallyDegraded' };

function parseStatusFilter(req: Request): DataplaneStatus | undefined {
  const wanted = firstQueryValue(req.query.status);
  if (wanted === undefined || wanted === '') return undefined;
  if (!Object.hasOwn(PROXY_STATUSES, wanted)) throw invalidResource([{ field: 'status', message: `must be one of ${Object.keys(PROXY_STATUSES).join(', ')}, got ${wanted}` }]);
  return PROXY_STATUSES[wanted];
}

/**
 * A page of the entities the filters select. A status filter (proxies only) keeps those whose
 * status, as the mesh's insight counts it, is the one asked for: every candidate of the other
 * filters is read, and the page is cut from those that match.
 */
async function listEntities(ctx: ApiContext, link: InsightLink, template: string, req: Request, mesh: string | undefined) {
  const page = parsePage(req);
  const query = { type: link.entity.name, ...(mesh !== undefined ? { mesh } : {}), ...parseListFilter(req, link.entity, template) };
  const status = link.entity.name === DATAPLANE ? parseStatusFilter(req) : undefined;
  if (status === undefined) return { page, found: await ctx.manager.list({ ...query, ...page }) };
  // Statuses are the insights' (still loading while a control plane starts).
  await ctx.insights.settled();
  const candidates = await ctx.manager.list({ ...query, offset: 0, size: 0 });
  const matching = candidates.items.filter((entity) => ctx.insights.dataplaneStatus(entity.mesh, entity.name) === status);
  const { items, listed } = pageOf(matching, page, (entity) => entity);
  return { page, found: { items: [...items], total: listed.total, start: listed.start } };
}

async function listOverviews(ctx: ApiContext, pages: AssembledPages, link: InsightLink, template: string, req: Request, res: Response, mesh: string | undefined) {
  requireAccess(callerOf(req), link.entity);
  const { page, found } = await listEntities(ctx, link, template, req, mesh);
  // The insights of the page's items, never the whole insight collection.
  const insights = await ctx.manager.getMany(link.insight, found.items);
  // A page polled again unchanged (same dataplanes, same insights) is sent as it was.
  const items = pages.items(`${link.entity.name}\u0000${req.originalUrl}`, [...found.items, ...insights], () =>
    joinItems(found.items.map((entity, i) => overviewListItem(link, entity, insights[i]))),
  );
  const last = found.items.at(-1);
  sendCollection(res, items, found.total, nextPageUrl(req, page, { start: found.start, total: found.total, last: last && { mesh: last.mesh, name: last.name } }));
}

async function getOverview(ctx: ApiContext, link: InsightLink, req: Request, res: Response, params: Params) {
  requireAccess(callerOf(req), link.entity);
  const mesh = params.mesh ?? '';
  const entity = await ctx.manager.get(link.entity, mesh, params.name!);
  if (!entity) throw resourceNotFound();
  const insight = await ctx.manager.get(link.insight, mesh, params.name!);
  sendJson(res, 200, overviewJson(link, entity, insight ?? null));
}

export function addOverviewRoutes(table: RouteTable, ctx: ApiContext): void {
  const pages = new AssembledPages();
  for (const link of INSIGHT_LINKS) {
    const { list } = kindPaths(link.entity);
    const legacyList = link.entity.scope === 'mesh' ? `/meshes/{mesh}/${link.legacyOverviewPath}` : `/${link.legacyOverviewPath}`;
    const lists = [`${list}/_overview`, legacyList];
    // Mesh-scoped kinds also list across meshes (`/dataplanes+insights`).
    if (link.entity.scope === 'mesh') lists.push(`/${link.entity.path}/_overview`, `/${link.legacyOverviewPath}`);
    const docs = overviewDocs(link);
    for (const path of lists) {
      table.add({ method: 'GET', path, doc: docs.list(path), answerChangesWith: 'any', handler: withOperation('list', (req, res, params) => listOverviews(ctx, pages, link, path, req, res, params.mesh)) });
    }
    for (const path of [`${list}/{name}/_overview`, `${legacyList}/{name}`]) {
      table.add({ method: 'GET', path, doc: docs.get, answerChangesWith: 'any', handler: withOperation('get', (req, res, params) => getOverview(ctx, link, req, res, params)) });
    }
  }
}

/** `DataplaneOverview` and kin: the entity's fields and its insight's, each under its kind's name. */
function overviewSchema(link: InsightLink) {
  const type = `${link.entity.name}Overview`;
  const mesh = link.entity.scope === 'mesh' || link.overviewMesh !== undefined ? { mesh: z.string() } : {};
  return component(
    type,
    z.object({
      type: z.literal(type),
      ...mesh,
      name: z.string(),
      creationTime: timestamp(`When the ${link.entity.singularDisplayName} was created.`),
      modificationTime: timestamp(`When the ${link.entity.singularDisplayName} last changed.`),
      labels: LabelsSchema.optional(),
      [lowerFirst(link.entity.name)]: kindSchemas(link.entity).spec,
      [lowerFirst(link.insight.name)]: kindSchemas(link.insight).spec.optional().meta({ description: 'Its runtime state: `{}` before it ever connected; left out of list items without one.' }),
    }),
  );
}

function overviewDocs(link: InsightLink): { list: (path: string) => RouteDoc; get: RouteDoc } {
  const schema = overviewSchema(link);
  const listSchema = component(`${link.entity.name}OverviewList`, collectionOf(schema));
  const example = exampleOf(link.entity);
  const one = link.entity.singularDisplayName;
  const tag = 'Overviews';
  return {
    list: (path) => ({
      summary: `List ${link.entity.displayName} with their runtime state${path.includes('{mesh}') ? ' (one mesh)' : link.entity.scope === 'mesh' ? ' (every mesh)' : ''}`,
      description: `Each ${one} joined with its ${link.insight.singularDisplayName}. ${path.includes('_overview') ? '' : 'The older path of the same list.'}`.trim(),
      tag,
      query: [
        ...listFilterParameters(link.entity),
        ...(link.entity.name === DATAPLANE
          ? [{ name: 'status', description: 'Only the proxies of this status, as the mesh insight counts them (docs/insights.md, Status).', schema: z.enum(['online', 'offline', 'partially_degraded']) }]
          : []),
      ],
      responses: { 200: { description: 'A page of overviews.', schema: listSchema } },
      errors: [400],
      ...(example ? { example: { params: path.includes('{mesh}') ? exampleListParams(example) : {} } } : {}),
    }),
    get: {
      summary: `Get a ${one} with its runtime state`,
      description: `The ${one} joined with its ${link.insight.singularDisplayName}.`,
      tag,
      responses: { 200: { description: 'The overview.', schema } },
      errors: [404],
      ...(example ? { example: { params: exampleParams(example) } } : {}),
    },
  };
}
