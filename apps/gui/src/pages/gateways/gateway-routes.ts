// The routes attached to a gateway, as its proxies get them (docs/gui.md, Gateways): the
// MeshGatewayRoutes of each listener of a builtin gateway, from its `/policies`; the targetRef
// routes (MeshHTTPRoute, MeshTCPRoute) that select it, from each route's `/dataplanes`.
import type { ApiClient, Schemas } from '../../api/client.js';
import { listPolicies, policyDataplanes, type PolicyKind } from '../policies/policy-kinds.js';

/** The route kinds with targetRef that attach to a proxy. */
export const TARGET_REF_ROUTE_KINDS = ['MeshHTTPRoute', 'MeshTCPRoute'] as const;

export interface AttachedRoute {
  kind: string;
  name: string;
}

/** A builtin gateway's MeshGatewayRoutes by listener port, for the gateway its proxy serves; none for another gateway. */
export function meshGatewayRoutesByPort(policies: Schemas['MatchedPolicies'] | undefined, gateway: string): Map<number, string[]> {
  const byPort = new Map<number, string[]>();
  if (policies?.kind !== 'MeshGatewayDataplane' || policies.gateway.name !== gateway) return byPort;
  for (const listener of policies.listeners) byPort.set(listener.port, [...new Set(listener.hosts.flatMap((host) => host.routes.map((attached) => attached.route)))].sort());
  return byPort;
}

/** The targetRef routes (of `kinds`, the catalogue's) that select a proxy, by kind then name: asked of each route, as the control plane selects. */
export async function targetRefRoutesSelecting(api: ApiClient, mesh: string, kinds: readonly PolicyKind[], proxy: string): Promise<AttachedRoute[]> {
  const routeKinds = kinds.filter((kind) => (TARGET_REF_ROUTE_KINDS as readonly string[]).includes(kind.name));
  const candidates = (await Promise.all(routeKinds.map(async (kind) => (await listPolicies(api, mesh, kind)).map((route) => ({ kind, name: route.name }))))).flat();
  const selecting = await Promise.all(
    candidates.map(async ({ kind, name }) => ((await policyDataplanes(api, mesh, kind, name)).items.some((item) => item.dataplane.name === proxy) ? [{ kind: kind.name, name }] : [])),
  );
  return selecting.flat().sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
}
