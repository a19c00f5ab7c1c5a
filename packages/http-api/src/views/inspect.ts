// Inspection (docs/insights.md, Inspection): the policies matched for a dataplane, the dataplanes a
// policy or gateway applies to, targetRef rules and the `/xds` dump of a proxy, all read from
// the proxy configuration the control plane keeps up to date (never matched per request); and the
// live views of connected proxies (`/xds` as sent, `/stats`, `/clusters`; docs/xds.md).
import {
  type AnyKind,
  dataplaneKind,
  DomainError,
  getKind,
  invalidResource,
  meshGatewayKind,
  meshGatewayRouteKind,
  policyKinds,
  resourceNotFound,
  targetRefPolicyKinds,
  type TargetRefPolicyKind,
  zoneEgressKind,
  zoneIngressKind,
} from '@mesh/model';
import {
  type AnyPolicy,
  type AnyTargetRefPolicy,
  describeGateway,
  listAttachments,
  listRuleItems,
  type MatchedPolicies,
  type PolicyKind,
  type TargetRefMatch,
  withTargetRefPolicies,
} from '@mesh/policy-matcher';
import { type MeshProxies, storedPolicyOf } from '@mesh/proxy-config';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { callerOf, requireRule, type StaticRuleName } from '../access.js';
import type { ApiContext, ProxyRef } from '../context.js';
import { kindPaths } from '../crud.js';
import { sendJson } from '../errors.js';
import { withOperation } from '../handler.js';
import { resourceJson } from '../resource-json.js';
import type { RouteDoc } from '../route-doc.js';
import type { Params, Route, RouteTable } from '../route-table.js';
import { exampleOf, exampleParams } from '../openapi/examples.js';
import { configDumpDoc, dataplanePoliciesDoc, dataplaneRulesDoc, gatewayDataplanesDoc, policyDataplanesDoc } from './inspect-docs.js';


/** A mesh's proxies once every write before the request is applied; 404 titled `title` when the mesh does not exist. */
async function meshProxies(ctx: ApiContext, req: Request, mesh: string, title: string): Promise<MeshProxies> {
  await ctx.proxyConfigs.settled();
  const proxies = ctx.proxyConfigs.mesh(mesh);
  if (!proxies) throw resourceNotFound(title);
  return proxies;
}

/** A matched policy as `GET` of it returns it (the full entity, where the reference shows only its meta). */
const policyEntity = (policy: AnyPolicy | AnyTargetRefPolicy, kind: PolicyKind | TargetRefPolicyKind): unknown => JSON.parse(resourceJson(getKind(kind), storedPolicyOf(policy)));

/**
 * The `/policies` body of each sidecar, kept with the match objects it was built from. The proxy
 * configuration replaces a proxy's matches whenever a change can alter them (and never changes
 * them in place), so the same objects always give the same bytes: a proxy polled again costs a
 * lookup instead of parsing and encoding every matched policy.
 */
const sidecarPoliciesJson = new WeakMap<MatchedPolicies, { targetRef: TargetRefMatch | undefined; json: string }>();

function sidecarPolicies(policies: MatchedPolicies, targetRef: TargetRefMatch | undefined): string {
  const cached = sidecarPoliciesJson.get(policies);
  if (cached && cached.targetRef === targetRef) return cached.json;
  // The targetRef policies selecting the proxy attach to it as a whole (docs/insights.md, Inspection).
  const legacy = listAttachments(policies, policyEntity);
  const items = targetRef ? withTargetRefPolicies(legacy, targetRef, policyEntity) : legacy;
  const json = JSON.stringify({ kind: 'SidecarDataplane', total: items.length, items });
  sidecarPoliciesJson.set(policies, { targetRef, json });
  return json;
}

async function dataplanePolicies(ctx: ApiContext, req: Request, res: Response, params: Params) {
  const mesh = await meshProxies(ctx, req, params.mesh!, 'Could not build MeshContext');
  const match = mesh.match(params.name!);
  if (!match) throw resourceNotFound('Could not get MatchedPolicies');
  if (match.kind === 'gateway') {
    sendJson(res, 200, JSON.stringify(describeGateway(match.gateway, policyEntity)));
    return;
  }
  sendJson(res, 200, sidecarPolicies(match.policies, mesh.targetRefMatch(params.name!)));
}

async function dataplaneRules(ctx: ApiContext, req: Request, res: Response, params: Params) {
  const mesh = await meshProxies(ctx, req, params.mesh!, 'Could not build MeshContext');
  const match = mesh.targetRefMatch(params.name!);
  if (!match) throw resourceNotFound('Could not get MatchedPolicies');
  const items = listRuleItems(match, mesh.vipDomains());
  sendJson(res, 200, JSON.stringify({ total: items.length, items }));
}

/** `/xds` of a proxy: what its live stream last sent when it has one here (docs/xds.md, Inspection), else the rendered configuration. */
async function sendConfigDump(ctx: ApiContext, res: Response, proxy: ProxyRef, rendered: unknown): Promise<void> {
  const live = await ctx.proxyInspector?.configDump(proxy);
  sendJson(res, 200, JSON.stringify(live ?? rendered));
}

async function dataplaneXds(ctx: ApiContext, req: Request, res: Response, params: Params) {
  requireRule(callerOf(req), ctx.access, 'viewConfigDump');
  const title = 'Could not get dataplane resource';
  const dump = (await meshProxies(ctx, req, params.mesh!, title)).configDump(params.name!);
  if (!dump) throw resourceNotFound(title);
  await sendConfigDump(ctx, res, { type: dataplaneKind.name, mesh: params.mesh!, name: params.name! }, dump);
}

async function policyDataplanes(ctx: ApiContext, kind: PolicyKind, req: Request, res: Response, params: Params) {
  // The policy is not looked up: an unknown one applies to no dataplane.
  const items = (await meshProxies(ctx, req, params.mesh!, 'Could not list Dataplanes')).dataplanesSelectedBy(kind, params.name!);
  sendJson(res, 200, JSON.stringify({ total: items.length, items }));
}

async function targetRefPolicyDataplanes(ctx: ApiContext, kind: TargetRefPolicyKind, req: Request, res: Response, params: Params) {
  // As for the other policies, an unknown one selects no dataplane.
  const items = (await meshProxies(ctx, req, params.mesh!, 'Could not list Dataplanes')).dataplanesSelectedByTargetRef(kind, params.name!);
  sendJson(res, 200, JSON.stringify({ total: items.length, items }));
}

async function gatewayDataplanes(ctx: ApiContext, req: Request, res: Response, params: Params, of: 'gateway' | 'route') {
  const mesh = await meshProxies(ctx, req, params.mesh!, 'Could not build mesh context');
  const dataplanes = of === 'gateway' ? mesh.gatewayDataplanes(params.name!) : mesh.gatewayRouteDataplanes(params.name!);
  if (!dataplanes) throw resourceNotFound(of === 'gateway' ? 'Could not find MeshGateway' : 'Could not find MeshGatewayRoute');
  sendJson(res, 200, JSON.stringify({ total: dataplanes.length, items: dataplanes.map((dataplane) => ({ dataplane })) }));
}

/** A zone control plane only reaches the zone ingresses of its own zone. */
async function requireLocalZoneIngress(ctx: ApiContext, name: string): Promise<void> {
  await ctx.proxyConfigs.settled();
  const ingress = ctx.proxyConfigs.zoneIngress(name);
  if (!ingress) throw resourceNotFound('Could not get zone ingress resource');
  const zone = ingress.spec.zone ?? '';
  if (ctx.mode === 'zone' && zone !== '' && zone !== ctx.zoneName) {
    throw invalidResource([], 'Could not connect to zone ingress that resides in another zone');
  }
}

async function zoneIngressXds(ctx: ApiContext, req: Request, res: Response, params: Params) {
  requireRule(callerOf(req), ctx.access, 'viewConfigDump');
  await requireLocalZoneIngress(ctx, params.name!);
  await sendConfigDump(ctx, res, { type: zoneIngressKind.name, mesh: '', name: params.name! }, ctx.proxyConfigs.zoneIngressConfigDump(params.name!));
}

async function zoneEgressXds(ctx: ApiContext, req: Request, res: Response, params: Params) {
  requireRule(callerOf(req), ctx.access, 'viewConfigDump');
  await ctx.proxyConfigs.settled();
  const dump = ctx.proxyConfigs.zoneEgressConfigDump(params.name!);
  if (!dump) throw resourceNotFound('Could not get zone egress resource');
  await sendConfigDump(ctx, res, { type: zoneEgressKind.name, mesh: '', name: params.name! }, dump);
}

type AdminOperation = 'stats' | 'clusters';

const ADMIN_RULES: Readonly<Record<AdminOperation, StaticRuleName>> = { stats: 'viewStats', clusters: 'viewClusters' };

/**
 * `/stats` and `/clusters` of a proxy, from its Envoy admin API through the data plane server
 * (docs/xds.md, Inspection); 503 when it cannot be reached (or no data plane server runs here).
 */
async function proxyAdmin(ctx: ApiContext, kind: AnyKind, operation: AdminOperation, req: Request, res: Response, params: Params) {
  requireRule(callerOf(req), ctx.access, ADMIN_RULES[operation]);
  const mesh = kind.scope === 'mesh' ? params.mesh! : '';
  if (kind === zoneIngressKind) await requireLocalZoneIngress(ctx, params.name!);
  else if (!(await ctx.manager.get(kind, mesh, params.name!))) throw resourceNotFound(`Could not get ${kind.singularDisplayName.toLowerCase()} resource`);
  if (!ctx.proxyInspector) throw new DomainError('unavailable', 'no data plane server runs on this control plane', { title: 'Could not execute admin operation' });
  const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
  const answer = await ctx.proxyInspector.admin({ type: kind.name, mesh, name: params.name! }, operation, query);
  res.status(200).type(answer.contentType.startsWith('application/json') ? 'application/json' : 'text/plain').send(answer.body);
}

/** The documentation of `/stats` and `/clusters`: Envoy's text. Their example succeeds only while its proxy runs. */
const adminDoc = (kind: AnyKind, operation: AdminOperation): RouteDoc => {
  const example = exampleOf(kind);
  return {
    summary: `${operation === 'stats' ? 'Show the statistics' : 'Show the upstream clusters'} of a live ${kind.singularDisplayName.toLowerCase()} proxy`,
    description:
      "Envoy's admin API of the proxy answers, reached by the data plane server at the admin address and port the proxy announced when it connected (docs/xds.md, Inspection); the query string is passed on (`format=json`, `filter=...`). 503 with a message of the control plane's own while the proxy is not connected to this instance or its admin API cannot be reached.",
    tag: 'Inspection',
    responses: { 200: { description: "Envoy's answer.", mediaType: 'text/plain', schema: z.string() } },
    errors: [400, 404, 503],
    ...(example ? { example: { params: exampleParams(example), needs: 'the proxy running and connected to this control plane' } } : {}),
  };
};

export function addInspectRoutes(table: RouteTable, ctx: ApiContext): void {
  const get = (path: string, doc: RouteDoc, handler: (req: Request, res: Response, params: Params) => Promise<void>, cached: Pick<Route, 'answerChangesWith'> = {}) =>
    table.add({ method: 'GET', path, doc, ...cached, handler: withOperation('get', handler) });
  // The matched policies follow stored data alone; a proxy's live views and dump do not.
  get('/meshes/{mesh}/dataplanes/{name}/policies', dataplanePoliciesDoc(dataplaneKind), (req, res, params) => dataplanePolicies(ctx, req, res, params), { answerChangesWith: 'any' });
  get('/meshes/{mesh}/dataplanes/{name}/rules', dataplaneRulesDoc(dataplaneKind), (req, res, params) => dataplaneRules(ctx, req, res, params));
  get('/meshes/{mesh}/dataplanes/{name}/xds', configDumpDoc(dataplaneKind), (req, res, params) => dataplaneXds(ctx, req, res, params));
  for (const kind of policyKinds().filter((k) => k.inspectable)) {
    get(`${kindPaths(kind).entity}/dataplanes`, policyDataplanesDoc(kind), (req, res, params) => policyDataplanes(ctx, kind.name, req, res, params));
  }
  for (const kind of targetRefPolicyKinds().filter((k) => k.inspectable)) {
    get(`${kindPaths(kind).entity}/dataplanes`, policyDataplanesDoc(kind), (req, res, params) => targetRefPolicyDataplanes(ctx, kind.name, req, res, params));
  }
  get(`${kindPaths(meshGatewayKind).entity}/dataplanes`, gatewayDataplanesDoc(meshGatewayKind), (req, res, params) => gatewayDataplanes(ctx, req, res, params, 'gateway'));
  get(`${kindPaths(meshGatewayRouteKind).entity}/dataplanes`, gatewayDataplanesDoc(meshGatewayRouteKind), (req, res, params) => gatewayDataplanes(ctx, req, res, params, 'route'));
  get('/zoneingresses/{name}/xds', configDumpDoc(zoneIngressKind), (req, res, params) => zoneIngressXds(ctx, req, res, params));
  get('/zoneegresses/{name}/xds', configDumpDoc(zoneEgressKind), (req, res, params) => zoneEgressXds(ctx, req, res, params));
  const proxies: ReadonlyArray<[string, AnyKind]> = [
    ['/meshes/{mesh}/dataplanes/{name}', dataplaneKind],
    ['/zoneingresses/{name}', zoneIngressKind],
    ['/zoneegresses/{name}', zoneEgressKind],
  ];
  for (const [path, kind] of proxies) {
    for (const operation of ['stats', 'clusters'] as const) {
      get(`${path}/${operation}`, adminDoc(kind, operation), (req, res, params) => proxyAdmin(ctx, kind, operation, req, res, params));
    }
  }
}
