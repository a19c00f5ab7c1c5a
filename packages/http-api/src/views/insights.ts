// Insights (docs/insights.md): mesh and service insights from the running aggregates, the
// global summaries, and the zones' status on a global control plane.
import { zoneStatus, type StoredZone, type StoredZoneInsight } from '@mesh/insights';
import { DomainError, KINDS, meshInsightKind, MeshInsightSpecSchema, resourceNotFound, serviceInsightKind, ServiceInsightSpecSchema, zoneInsightKind, zoneKind } from '@mesh/model';
import type { Request, Response } from 'express';
import { z } from 'zod';
import type { ApiContext } from '../context.js';
import { sendJson } from '../errors.js';
import { meshInsightBytes, serviceInsightBytes } from '../insight-json.js';
import { withOperation } from '../handler.js';
import { AssembledPages, joinItems, sendCollection } from '../page-cache.js';
import { EXAMPLE_MESH, EXAMPLE_SERVICE } from '../openapi/examples.js';
import { collectionOf, component, timestamp } from '../openapi/schemas.js';
import { nextPageUrl, pageOf, parsePage } from '../pagination.js';
import { NAME_FILTER, PAGE_PARAMETERS } from '../route-doc.js';
import type { Params, RouteTable } from '../route-table.js';
import { nameFilter } from '../query.js';


/** Aggregates reflect every write made before the request. */
async function readInsights(ctx: ApiContext) {
  await ctx.insights.settled();
  return ctx.insights;
}

/** `sendJson` for bytes already encoded. */
function sendEncoded(res: Response, json: Buffer): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.end(json);
}

async function listMeshInsights(ctx: ApiContext, pages: AssembledPages, req: Request, res: Response) {
  const insights = await readInsights(ctx);
  const page = parsePage(req);
  const names = insights.meshNames().filter((name) => name.includes(nameFilter(req)));
  const found = pageOf(names, page, (name) => ({ mesh: '', name }));
  const listed = found.items.map((name) => insights.meshInsight(name)!);
  const items = pages.items(req.originalUrl, listed, () => joinItems(listed.map((insight) => meshInsightBytes(insight))));
  sendCollection(res, items, names.length, nextPageUrl(req, page, found.listed));
}

async function getMeshInsight(ctx: ApiContext, req: Request, res: Response, params: Params) {
  const insight = (await readInsights(ctx)).meshInsight(params.name!);
  if (!insight) throw resourceNotFound();
  sendEncoded(res, meshInsightBytes(insight));
}

async function listServiceInsights(ctx: ApiContext, pages: AssembledPages, req: Request, res: Response, mesh: string | undefined) {
  const insights = await readInsights(ctx);
  const page = parsePage(req, 'Could not paginate resources');
  const services = insights.listServices(mesh, nameFilter(req));
  const found = pageOf(services, page, (service) => service);
  const listed = found.items.map((service) => insights.serviceInsight(service.mesh, service.name)!);
  const items = pages.items(req.originalUrl, listed, () => joinItems(listed.map((insight) => serviceInsightBytes(insight))));
  sendCollection(res, items, services.length, nextPageUrl(req, page, found.listed));
}

/** A service nobody names answers with empty counts; only a missing mesh is not found. */
async function getServiceInsight(ctx: ApiContext, req: Request, res: Response, params: Params) {
  const insight = (await readInsights(ctx)).serviceInsight(params.mesh!, params.name!);
  if (!insight) throw resourceNotFound();
  sendEncoded(res, serviceInsightBytes(insight));
}

/** `/global-insights`: how many of each global kind exist (runtime state left out). */
async function countGlobalResources(ctx: ApiContext, req: Request, res: Response) {
  const kinds = KINDS.filter((kind) => kind.scope === 'global' && !kind.readOnly).sort((a, b) => (a.name < b.name ? -1 : 1));
  const resources: Record<string, { total: number }> = {};
  for (const kind of kinds) resources[kind.name] = { total: await ctx.manager.reader.count(kind.name) };
  sendJson(res, 200, JSON.stringify({ type: 'GlobalInsights', creationTime: new Date().toISOString(), resources }));
}

async function summarizeGlobally(ctx: ApiContext, req: Request, res: Response) {
  const insights = await readInsights(ctx);
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
  const tag = 'Insights';
  const listQuery = [...PAGE_PARAMETERS, NAME_FILTER];
  table
    .add({
      method: 'GET',
      path: `/${meshInsightKind.path}`,
      answerChangesWith: 'any',
      doc: { summary: 'List mesh insights', tag, query: listQuery, responses: { 200: { description: 'A page of mesh insights.', schema: collectionOf(MeshInsightSchema) } }, errors: [400], example: {} },
      handler: withOperation('list', (req, res) => listMeshInsights(ctx, pages, req, res)),
    })
    .add({
      method: 'GET',
      path: `/${meshInsightKind.path}/{name}`,
      answerChangesWith: 'any',
      doc: { summary: "Get a mesh's insight", tag, responses: { 200: { description: "The mesh's figures.", schema: MeshInsightSchema } }, errors: [404], example: { params: { name: EXAMPLE_MESH } } },
      handler: withOperation('get', (req, res, params) => getMeshInsight(ctx, req, res, params)),
    })
    .add({
      method: 'GET',
      path: `/${serviceInsightKind.path}`,
      answerChangesWith: 'any',
      doc: { summary: 'List the service insights of every mesh', tag, query: listQuery, responses: { 200: { description: 'A page of service insights.', schema: ServiceInsightListSchema } }, errors: [400], example: {} },
      handler: withOperation('list', (req, res) => listServiceInsights(ctx, pages, req, res, undefined)),
    })
    .add({
      method: 'GET',
      path: `/meshes/{mesh}/${serviceInsightKind.path}`,
      answerChangesWith: 'any',
      doc: {
        summary: 'List the service insights of a mesh',
        tag,
        query: listQuery,
        responses: { 200: { description: 'A page of service insights.', schema: ServiceInsightListSchema } },
        errors: [400],
        example: { params: { mesh: EXAMPLE_MESH } },
      },
      handler: withOperation('list', (req, res, params) => listServiceInsights(ctx, pages, req, res, params.mesh)),
    })
    .add({
      method: 'GET',
      path: `/meshes/{mesh}/${serviceInsightKind.path}/{name}`,
      answerChangesWith: 'any',
      doc: {
        summary: "Get a service's insight",
        description: 'A service nothing names answers with empty counts; only a missing mesh is not found.',
        tag,
        responses: { 200: { description: "The service's figures.", schema: ServiceInsightSchema } },
        errors: [404],
        example: { params: { mesh: EXAMPLE_MESH, name: EXAMPLE_SERVICE } },
      },
      handler: withOperation('get', (req, res, params) => getServiceInsight(ctx, req, res, params)),
    })
    .add({
      method: 'GET',
      path: '/global-insights',
      doc: { summary: 'Count the resources of each global kind', tag, responses: { 200: { description: 'Counts by kind.', schema: GlobalInsightsSchema } }, errors: [], example: {} },
      handler: withOperation('get', (req, res) => countGlobalResources(ctx, req, res)),
    })
    .add({
      method: 'GET',
      path: '/global-insight',
      doc: { summary: 'Sum up meshes, proxies, policies, services and zones', tag, responses: { 200: { description: 'The sums.', schema: GlobalInsightSchema } }, errors: [], example: {} },
      handler: withOperation('get', (req, res) => summarizeGlobally(ctx, req, res)),
    })
    .add({
      method: 'GET',
      path: '/status/zones',
      doc: {
        summary: 'List the zones and whether each is connected',
        description: 'Served by a global control plane; the others answer 404.',
        tag,
        responses: { 200: { description: 'Every zone.', schema: ZoneStatusesSchema } },
        errors: [404],
        example: {},
        modes: ['global'],
      },
      handler: withOperation('get', (req, res) => listZoneStatuses(ctx, req, res)),
    });
}

const times = { creationTime: timestamp('When the figures were first computed.'), modificationTime: timestamp('When they last changed.') };

const MeshInsightSchema = component(
  'MeshInsight',
  z.intersection(z.object({ type: z.literal(meshInsightKind.name), name: z.string(), ...times, lastSync: timestamp('The same as `modificationTime`.') }), MeshInsightSpecSchema),
);

const ServiceInsightSchema = component(
  'ServiceInsight',
  z.intersection(z.object({ type: z.literal(serviceInsightKind.name), mesh: z.string(), name: z.string(), ...times }), ServiceInsightSpecSchema),
);

const ServiceInsightListSchema = component('ServiceInsightList', collectionOf(ServiceInsightSchema));

const GlobalInsightsSchema = component(
  'GlobalInsights',
  z.object({ type: z.literal('GlobalInsights'), creationTime: timestamp('When the counts were taken.'), resources: z.record(z.string(), z.object({ total: z.number().int() })) }),
);

const statusCounts = z.object({ total: z.number().int(), online: z.number().int(), offline: z.number().int(), partiallyDegraded: z.number().int() });
const onlineCounts = z.object({ online: z.number().int(), total: z.number().int() });

const GlobalInsightSchema = component(
  'GlobalInsight',
  z.object({
    createdAt: timestamp('When the sums were taken.'),
    meshes: z.object({ total: z.number().int() }),
    dataplanes: z.object({ standard: statusCounts, gatewayBuiltin: statusCounts, gatewayDelegated: statusCounts }),
    policies: z.object({ total: z.number().int() }),
    services: z.object({ internal: statusCounts, external: z.object({ total: z.number().int() }), gatewayBuiltin: statusCounts, gatewayDelegated: statusCounts }),
    zones: z.object({ controlPlanes: onlineCounts, zoneIngresses: onlineCounts, zoneEgresses: onlineCounts }),
  }),
);

const ZoneStatusesSchema = component('ZoneStatuses', z.array(z.object({ name: z.string(), url: z.string(), active: z.boolean() })));
