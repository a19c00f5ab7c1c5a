// The one list of resource kinds. Routing, validation, the /policies catalogue, the store and
// zone sync all read it; adding a kind is adding its file and one line here.
import type { AnyKind } from './kind.js';
import { circuitBreakerKind } from './kinds/circuit-breaker.js';
import { dataplaneKind } from './kinds/dataplane.js';
import { externalServiceKind } from './kinds/external-service.js';
import { faultInjectionKind } from './kinds/fault-injection.js';
import { globalSecretKind } from './kinds/global-secret.js';
import { healthCheckKind } from './kinds/health-check.js';
import { meshGatewayRouteKind } from './kinds/mesh-gateway-route.js';
import { meshGatewayKind } from './kinds/mesh-gateway.js';
import { meshKind } from './kinds/mesh.js';
import { proxyTemplateKind } from './kinds/proxy-template.js';
import { rateLimitKind } from './kinds/rate-limit.js';
import { retryKind } from './kinds/retry.js';
import { secretKind } from './kinds/secret.js';
import { timeoutKind } from './kinds/timeout.js';
import { trafficLogKind } from './kinds/traffic-log.js';
import { trafficPermissionKind } from './kinds/traffic-permission.js';
import { trafficRouteKind } from './kinds/traffic-route.js';
import { trafficTraceKind } from './kinds/traffic-trace.js';
import { virtualOutboundKind } from './kinds/virtual-outbound.js';
import { zoneEgressKind } from './kinds/zone-egress.js';
import { zoneIngressKind } from './kinds/zone-ingress.js';
import { zoneKind } from './kinds/zone.js';

export const KINDS: readonly AnyKind[] = [
  meshKind,
  dataplaneKind,
  healthCheckKind,
  trafficPermissionKind,
  trafficLogKind,
  trafficRouteKind,
  trafficTraceKind,
  faultInjectionKind,
  retryKind,
  timeoutKind,
  proxyTemplateKind,
  circuitBreakerKind,
  rateLimitKind,
  virtualOutboundKind,
  meshGatewayKind,
  meshGatewayRouteKind,
  externalServiceKind,
  secretKind,
  globalSecretKind,
  zoneKind,
  zoneIngressKind,
  zoneEgressKind,
];

const byName = new Map(KINDS.map((kind) => [kind.name, kind]));
const meshScopedByPath = new Map(KINDS.filter((k) => k.scope === 'mesh').map((kind) => [kind.path, kind]));
const globalByPath = new Map(KINDS.filter((k) => k.scope === 'global').map((kind) => [kind.path, kind]));

export const findKind = (name: string): AnyKind | undefined => byName.get(name);

export function getKind(name: string): AnyKind {
  const kind = byName.get(name);
  if (!kind) throw new Error(`unknown resource kind ${name}`);
  return kind;
}

/** The kind served at `/meshes/{mesh}/<path>`. */
export const findMeshScopedKindByPath = (path: string): AnyKind | undefined => meshScopedByPath.get(path);

/** The kind served at `/<path>` (Mesh is `/meshes`). */
export const findGlobalKindByPath = (path: string): AnyKind | undefined => globalByPath.get(path);

export const meshScopedKinds = (): AnyKind[] => [...meshScopedByPath.values()];

/** The `/policies` catalogue, sorted by name code unit as the reference sorts it. */
export const catalogueKinds = (): AnyKind[] =>
  KINDS.filter((k) => k.inCatalogue).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
