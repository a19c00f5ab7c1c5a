// Insights (docs/insights.md): mesh and service insights from the running aggregates, the
// global summaries, and the zones' status on a global control plane.
import { zoneStatus, type MeshInsight, type ServiceInsight, type StoredZone, type StoredZoneInsight } from '@mesh/insights';
import { DomainError, KINDS, meshInsightKind, resourceNotFound, serviceInsightKind, zoneInsightKind, zoneKind } from '@mesh/model';
import type { Request, Response } from 'express';
import type { ApiContext } from '../context.js';
import { sendJson } from '../errors.js';
import { withOperation } from '../handler.js';
import { AssembledPages, joinItems, sendCollection } from '../page-cache.js';
import { nextPageUrl, parsePage, type Page } from '../pagination.js';
import type { Params, RouteTable } from '../route-table.js';
import { nameFilter } from '../query.js';


const pageOf = <T>(items: readonly T[], page: Page): readonly T[] => items.slice(page.offset, page.size === 0 ? undefined : page.offset + page.size);

/** Aggregates reflect every write made before the request. */
async function readInsights(ctx: ApiContext, req: Request) {
  await ctx.insights.settled();
  return ctx.insights;
}

/**
 * The aggregator hands out the same insight object while it is unchanged, so each one is encoded
 * once: polling unchanged insights costs what sending them costs.
 */
const bytesOf = new WeakMap<MeshInsight | ServiceInsight, Buffer>();

function encoded<T extends MeshInsight | ServiceInsight>(insight: T, json: (insight: T) => string): Buffer {
  let bytes = bytesOf.get(insight);
  if (bytes === undefined) bytesOf.set(insight, (bytes = Buffer.from(json(insight))));
  return bytes;
}

const meshInsightJson = (insight: MeshInsight): string =>
  JSON.stringify({
    type: meshInsightKind.name,
    name: insight.mesh,
    creationTime: insight.creationTime,
    modificationTime: insight.modificationTime,
    lastSync: insight.modificationTime,
    ...insight.spec,
  });

const serviceInsightJson = (insight: ServiceInsight): string =>
  JSON.stringify({
    type: serviceInsightKind.name,
    mesh: insight.mesh,
    name: insight.name,
    creationTime: insight.creationTime,
    modificationTime: insight.modificationTime,
    ...insight.stat,
  });

/** `sendJson` for bytes already encoded. */
function sendEncoded(res: Response, json: Buffer): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.end(json);
}

async function listMeshInsights(ctx: ApiContext, pages: AssembledPages, req: Request, res: Response) {
  const insights = await readInsights(ctx, req);
  const page = parsePage(req);
  const names = insights.meshNames().filter((name) => name.includes(nameFilter(req)));
  const listed = pageOf(names, page).map((name) => insights.meshInsight(name)!);
  const items = pages.items(req.originalUrl, listed, () => joinItems(listed.map((insight) => encoded(insight, meshInsightJson))));
  sendCollection(res, items, names.length, nextPageUrl(req, page, names.length));
}

async function getMeshInsight(ctx: ApiContext, req: Request, res: Response, params: Params) {
  const insight = (await readInsights(ctx, req)).meshInsight(params.name!);
  if (!insight) throw resourceNotFound();
  sendEncoded(res, encoded(insight, meshInsightJson));
}

async function listServiceInsights(ctx: ApiContext, pages: AssembledPages, req: Request, res: Response, mesh: string | undefined) {
  const insights = await readInsights(ctx, req);
  const page = parsePage(req, 'Could not paginate resources');
  const services = insights.listServices(mesh, nameFilter(req));
  const listed = pageOf(services, page).map((service) => insights.serviceInsight(service.mesh, service.name)!);
  const items = pages.items(req.originalUrl, listed, () => joinItems(listed.map((insight) => encoded(insight, serviceInsightJson))));
  sendCollection(res, items, services.length, nextPageUrl(req, page, services.length));
}

/** A service nobody names answers with empty counts; only a missing mesh is not found. */
async function getServiceInsight(ctx: ApiContext, req: Request, res: Response, params: Params) {
  const insight = (await readInsights(ctx, req)).serviceInsight(params.mesh!, params.name!);
  if (!insight) throw resourceNotFound();
  sendEncoded(res, encoded(insight, serviceInsightJson));
}

/** `/global-insights`: how many of each global kind exist (runtime state left out). */
async function countGlobalResources(ctx: ApiContext, req: Request, res: Response) {
  const kinds = KINDS.filter((kind) => kind.scope === 'global' && !kind.readOnly).sort((a, b) => (a.name < b.name ? -1 : 1));
  const resources: Record<string, { total: number }> = {};
  for (const kind of kinds) resources[kind.name] = { total: await ctx.manager.store.count(kind.name) };
  sendJson(res, 200, JSON.stringify({ type: 'GlobalInsights', creationTime: new Date().toISOString(), resources }));
}

async function summarizeGlobally(ctx: ApiContext, req: Request, res: Response) {
  const insights = await readInsights(ctx, req);
  sendJson(res, 200, JSON.stringify(await insights.globalInsight()));
}

/** `/status/zones` (global only): `[{name, url, active}]`, `[]` without zones. */
async function listZoneStatuses(ctx: ApiContext, req: Request, res: Response) {
  if (ctx.mode !== 'global') throw new DomainError('not_found', '/status/zones is served by a global control plane', { title: 'Not Found' });
  const everything = { offset: 0, size: 0 };
  const [zones, zoneInsights] = await Promise.all([
    ctx.manager.list({ type: zoneKind.name, ...everything }),
    ctx.manager.list({ type: zoneInsightKind.name, ...everything }),
  ]);
  const insightByZone = new Map(zoneInsights.items.map((insight) => [insight.name, JSON.parse(insight.spec) as StoredZoneInsight]));
  const statuses = zones.items.map((zone) => ({ name: zone.name, ...zoneStatus(JSON.parse(zone.spec) as StoredZone, insightByZone.get(zone.name)) }));
  sendJson(res, 200, JSON.stringify(statuses));
}

export function addInsightRoutes(table: RouteTable, ctx: ApiContext): void {
  // Pages of unchanged insights (the same objects from the aggregator) are sent as they were.
  const pages = new AssembledPages();
  table
    .add({ method: 'GET', path: `/${meshInsightKind.path}`, handler: withOperation('list', (req, res) => listMeshInsights(ctx, pages, req, res)) })
    .add({ method: 'GET', path: `/${meshInsightKind.path}/{name}`, handler: withOperation('get', (req, res, params) => getMeshInsight(ctx, req, res, params)) })
    .add({ method: 'GET', path: `/${serviceInsightKind.path}`, handler: withOperation('list', (req, res) => listServiceInsights(ctx, pages, req, res, undefined)) })
    .add({
      method: 'GET',
      path: `/meshes/{mesh}/${serviceInsightKind.path}`,
      handler: withOperation('list', (req, res, params) => listServiceInsights(ctx, pages, req, res, params.mesh)),
    })
    .add({
      method: 'GET',
      path: `/meshes/{mesh}/${serviceInsightKind.path}/{name}`,
      handler: withOperation('get', (req, res, params) => getServiceInsight(ctx, req, res, params)),
    })
    .add({ method: 'GET', path: '/global-insights', handler: withOperation('get', (req, res) => countGlobalResources(ctx, req, res)) })
    .add({ method: 'GET', path: '/global-insight', handler: withOperation('get', (req, res) => summarizeGlobally(ctx, req, res)) })
    .add({ method: 'GET', path: '/status/zones', handler: withOperation('get', (req, res) => listZoneStatuses(ctx, req, res)) });
}
