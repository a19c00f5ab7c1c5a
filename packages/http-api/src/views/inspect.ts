// Inspection (docs/insights.md, Inspection): the policies matched for a dataplane, the dataplanes a
// policy or gateway applies to, targetRef rules and the `/xds` dump of a proxy, all read from
// the proxy configuration the control plane keeps up to date (never matched per request).
import { getKind, invalidResource, meshGatewayKind, meshGatewayRouteKind, policyKinds, resourceNotFound } from '@mesh/model';
import { type AnyPolicy, describeGateway, listAttachments, type PolicyKind } from '@mesh/policy-matcher';
import { type MeshProxies, storedPolicyOf } from '@mesh/proxy-config';
import type { Request, Response } from 'express';
import { callerOf, requireRule } from '../access.js';
import type { ApiContext } from '../context.js';
import { kindPaths } from '../crud.js';
import { sendJson } from '../errors.js';
import { withOperation } from '../handler.js';
import { resourceJson } from '../resource-json.js';
import type { Params, RouteTable } from '../route-table.js';


/** A mesh's proxies once every write before the request is applied; 404 titled `title` when the mesh does not exist. */
async function meshProxies(ctx: ApiContext, req: Request, mesh: string, title: string): Promise<MeshProxies> {
  await ctx.proxyConfigs.settled();
  const proxies = ctx.proxyConfigs.mesh(mesh);
  if (!proxies) throw resourceNotFound(title);
  return proxies;
}

/** A matched policy as `GET` of it returns it (the seed's full entity, not the reference's meta). */
const policyEntity = (policy: AnyPolicy, kind: PolicyKind): unknown => JSON.parse(resourceJson(getKind(kind), storedPolicyOf(policy)));

async function dataplanePolicies(ctx: ApiContext, req: Request, res: Response, params: Params) {
  const mesh = await meshProxies(ctx, req, params.mesh!, 'Could not build MeshContext');
  const match = mesh.match(params.name!);
  if (!match) throw resourceNotFound('Could not get MatchedPolicies');
  if (match.kind === 'gateway') {
    sendJson(res, 200, JSON.stringify(describeGateway(match.gateway, policyEntity)));
    return;
  }
  const items = listAttachments(match.policies, policyEntity);
  sendJson(res, 200, JSON.stringify({ kind: 'SidecarDataplane', total: items.length, items }));
}

async function dataplaneRules(ctx: ApiContext, req: Request, res: Response, params: Params) {
  const mesh = await meshProxies(ctx, req, params.mesh!, 'Could not build MeshContext');
  if (!mesh.match(params.name!)) throw resourceNotFound('Could not get MatchedPolicies');
  // Rules come from targetRef policies only, and this control plane has no targetRef kinds.
  sendJson(res, 200, JSON.stringify({ total: 0, items: [] }));
}

async function dataplaneXds(ctx: ApiContext, req: Request, res: Response, params: Params) {
  requireRule(callerOf(req), ctx.access, 'viewConfigDump');
  const title = 'Could not get dataplane resource';
  const dump = (await meshProxies(ctx, req, params.mesh!, title)).configDump(params.name!);
  if (!dump) throw resourceNotFound(title);
  sendJson(res, 200, JSON.stringify(dump));
}

async function policyDataplanes(ctx: ApiContext, kind: PolicyKind, req: Request, res: Response, params: Params) {
  // The policy is not looked up: an unknown one applies to no dataplane.
  const items = (await meshProxies(ctx, req, params.mesh!, 'Could not list Dataplanes')).dataplanesSelectedBy(kind, params.name!);
  sendJson(res, 200, JSON.stringify({ total: items.length, items }));
}

async function gatewayDataplanes(ctx: ApiContext, req: Request, res: Response, params: Params, of: 'gateway' | 'route') {
  const mesh = await meshProxies(ctx, req, params.mesh!, 'Could not build mesh context');
  const dataplanes = of === 'gateway' ? mesh.gatewayDataplanes(params.name!) : mesh.gatewayRouteDataplanes(params.name!);
  if (!dataplanes) throw resourceNotFound(of === 'gateway' ? 'Could not find MeshGateway' : 'Could not find MeshGatewayRoute');
  sendJson(res, 200, JSON.stringify({ total: dataplanes.length, items: dataplanes.map((dataplane) => ({ dataplane })) }));
}

async function zoneIngressXds(ctx: ApiContext, req: Request, res: Response, params: Params) {
  requireRule(callerOf(req), ctx.access, 'viewConfigDump');
  await ctx.proxyConfigs.settled();
  const ingress = ctx.proxyConfigs.zoneIngress(params.name!);
  if (!ingress) throw resourceNotFound('Could not get zone ingress resource');
  const zone = ingress.spec.zone ?? '';
  if (ctx.mode === 'zone' && zone !== '' && zone !== ctx.zoneName) {
    throw invalidResource([], 'Could not connect to zone ingress that resides in another zone');
  }
  sendJson(res, 200, JSON.stringify(ctx.proxyConfigs.zoneIngressConfigDump(params.name!)));
}

async function zoneEgressXds(ctx: ApiContext, req: Request, res: Response, params: Params) {
  requireRule(callerOf(req), ctx.access, 'viewConfigDump');
  await ctx.proxyConfigs.settled();
  const dump = ctx.proxyConfigs.zoneEgressConfigDump(params.name!);
  if (!dump) throw resourceNotFound('Could not get zone egress resource');
  sendJson(res, 200, JSON.stringify(dump));
}

export function addInspectRoutes(table: RouteTable, ctx: ApiContext): void {
  const get = (path: string, handler: (req: Request, res: Response, params: Params) => Promise<void>) =>
    table.add({ method: 'GET', path, handler: withOperation('get', handler) });
  get('/meshes/{mesh}/dataplanes/{name}/policies', (req, res, params) => dataplanePolicies(ctx, req, res, params));
  get('/meshes/{mesh}/dataplanes/{name}/rules', (req, res, params) => dataplaneRules(ctx, req, res, params));
  get('/meshes/{mesh}/dataplanes/{name}/xds', (req, res, params) => dataplaneXds(ctx, req, res, params));
  for (const kind of policyKinds().filter((k) => k.inspectable)) {
    get(`${kindPaths(kind).entity}/dataplanes`, (req, res, params) => policyDataplanes(ctx, kind.name, req, res, params));
  }
  get(`${kindPaths(meshGatewayKind).entity}/dataplanes`, (req, res, params) => gatewayDataplanes(ctx, req, res, params, 'gateway'));
  get(`${kindPaths(meshGatewayRouteKind).entity}/dataplanes`, (req, res, params) => gatewayDataplanes(ctx, req, res, params, 'route'));
  get('/zoneingresses/{name}/xds', (req, res, params) => zoneIngressXds(ctx, req, res, params));
  get('/zoneegresses/{name}/xds', (req, res, params) => zoneEgressXds(ctx, req, res, params));
}
