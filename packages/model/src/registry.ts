// The one list of resource kinds. Routing, validation, the /policies catalogue, the store, zone
// sync, the OpenAPI document and meshctl all read it, and the policy lists derive from it; adding
// a kind is adding its file and its entry here (docs/policies.md, Adding a policy kind).
import type { AnyKind, KindDescriptor } from './kind.js';
import { circuitBreakerKind } from './kinds/circuit-breaker.js';
import { dataplaneInsightKind } from './kinds/dataplane-insight.js';
import { dataplaneKind } from './kinds/dataplane.js';
import { externalServiceKind } from './kinds/external-service.js';
import { faultInjectionKind } from './kinds/fault-injection.js';
import { globalSecretKind } from './kinds/global-secret.js';
import { healthCheckKind } from './kinds/health-check.js';
import { meshGatewayRouteKind } from './kinds/mesh-gateway-route.js';
import { meshGatewayKind } from './kinds/mesh-gateway.js';
import { meshInsightKind } from './kinds/mesh-insight.js';
import { meshKind } from './kinds/mesh.js';
import { meshAccessLogKind } from './kinds/mesh-access-log.js';
import { meshCircuitBreakerKind } from './kinds/mesh-circuit-breaker.js';
import { meshFaultInjectionKind } from './kinds/mesh-fault-injection.js';
import { meshHealthCheckKind } from './kinds/mesh-health-check.js';
import { meshHTTPRouteKind } from './kinds/mesh-http-route.js';
import { meshLoadBalancingStrategyKind } from './kinds/mesh-load-balancing-strategy.js';
import { meshProxyPatchKind } from './kinds/mesh-proxy-patch.js';
import { meshRateLimitKind } from './kinds/mesh-rate-limit.js';
import { meshRetryKind } from './kinds/mesh-retry.js';
import { meshTCPRouteKind } from './kinds/mesh-tcp-route.js';
import { meshTimeoutKind } from './kinds/mesh-timeout.js';
import { meshTraceKind } from './kinds/mesh-trace.js';
import { meshTrafficPermissionKind } from './kinds/mesh-traffic-permission.js';
import { proxyTemplateKind } from './kinds/proxy-template.js';
import { rateLimitKind } from './kinds/rate-limit.js';
import { retryKind } from './kinds/retry.js';
import { secretKind } from './kinds/secret.js';
import { serviceInsightKind } from './kinds/service-insight.js';
import { timeoutKind } from './kinds/timeout.js';
import { trafficLogKind } from './kinds/traffic-log.js';
import { trafficPermissionKind } from './kinds/traffic-permission.js';
import { trafficRouteKind } from './kinds/traffic-route.js';
import { trafficTraceKind } from './kinds/traffic-trace.js';
import { virtualOutboundKind } from './kinds/virtual-outbound.js';
import { zoneEgressInsightKind } from './kinds/zone-egress-insight.js';
import { zoneEgressKind } from './kinds/zone-egress.js';
import { zoneIngressInsightKind } from './kinds/zone-ingress-insight.js';
import { zoneIngressKind } from './kinds/zone-ingress.js';
import { zoneInsightKind } from './kinds/zone-insight.js';
import { zoneKind } from './kinds/zone.js';

/** Every kind, in the order routes are registered and documented and zone sync sends them. */
const REGISTERED = [
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
  meshAccessLogKind,
  meshCircuitBreakerKind,
  meshFaultInjectionKind,
  meshHealthCheckKind,
  meshHTTPRouteKind,
  meshLoadBalancingStrategyKind,
  meshProxyPatchKind,
  meshRateLimitKind,
  meshRetryKind,
  meshTCPRouteKind,
  meshTimeoutKind,
  meshTraceKind,
  meshTrafficPermissionKind,
  externalServiceKind,
  secretKind,
  globalSecretKind,
  zoneKind,
  zoneIngressKind,
  zoneEgressKind,
  dataplaneInsightKind,
  zoneInsightKind,
  zoneIngressInsightKind,
  zoneEgressInsightKind,
  meshInsightKind,
  serviceInsightKind,
] as const;

export const KINDS: readonly AnyKind[] = REGISTERED;

type RegisteredKind = (typeof REGISTERED)[number];
const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const inNameOrder = (a: AnyKind, b: AnyKind): number => compareNames(a.name, b.name);
/** Alphabetically, case aside (`MeshHealthCheck` before `MeshHTTPRoute`): the order policy lists are served and counted in. */
const alphabetically = (a: AnyKind, b: AnyKind): number => compareNames(a.name.toLowerCase(), b.name.toLowerCase());

/**
 * A kind whose runtime state an insight kind records under the same key (a proxy and its xDS
 * subscriptions). The REST API joins the two into an overview (`DataplaneOverview`).
 */
export interface InsightLink {
  entity: AnyKind;
  insight: AnyKind;
  /** The collection path the reference also serves the overviews at, beside `<path>/_overview`. */
  legacyOverviewPath: string;
  /** A `mesh` value overviews of a global kind carry (the API's ZoneOverview, as the reference's 1.x docs show it). */
  overviewMesh?: string;
}

export const INSIGHT_LINKS: readonly InsightLink[] = [
  { entity: dataplaneKind, insight: dataplaneInsightKind, legacyOverviewPath: 'dataplanes+insights' },
  { entity: zoneKind, insight: zoneInsightKind, legacyOverviewPath: 'zones+insights', overviewMesh: 'default' },
  { entity: zoneIngressKind, insight: zoneIngressInsightKind, legacyOverviewPath: 'zoneingresses+insights' },
  { entity: zoneEgressKind, insight: zoneEgressInsightKind, legacyOverviewPath: 'zoneegressoverviews' },
];

const insightKinds = new Set(INSIGHT_LINKS.map((link) => link.insight));

/** Kinds that record runtime state rather than configuration. */
export const isInsightKind = (kind: AnyKind): boolean => insightKinds.has(kind);

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

/**
 * Policies: the kinds that select proxies by sources and destinations or by selectors (a
 * `selection`), alphabetically. Matching, inspection and insights read this list and the spec
 * types it carries (`PolicySpecOf`).
 */
export type PolicyKindDescriptor = Extract<RegisteredKind, { readonly selection: string }>;
export const POLICY_KINDS: readonly PolicyKindDescriptor[] = REGISTERED.filter((kind): kind is PolicyKindDescriptor => kind.selection !== undefined).sort(alphabetically);

/** The name of a policy kind (`TrafficRoute`). */
export type PolicyKind = PolicyKindDescriptor['name'];
/** The spec type of a policy kind, from its schema. */
export type PolicySpecOf<K extends PolicyKind> = Extract<PolicyKindDescriptor, { name: K }> extends KindDescriptor<infer Spec> ? Spec : never;

export const policyKinds = (): readonly PolicyKindDescriptor[] => POLICY_KINDS;

const policyKindNames = new Set<string>(POLICY_KINDS.map((kind) => kind.name));
export const isPolicyKind = (name: string): name is PolicyKind => policyKindNames.has(name);

/**
 * The targetRef policies (docs/policies.md): the kinds with a `targetRefPolicy`, alphabetically.
 * Kept apart from `POLICY_KINDS`: they select proxies and merge into rules their own way
 * (docs/matching.md, targetRef policies), reading this list and the spec types it carries
 * (`TargetRefPolicySpecOf`).
 */
export type TargetRefPolicyKindDescriptor = Extract<RegisteredKind, { readonly targetRefPolicy: object }>;
export const TARGET_REF_POLICY_KINDS: readonly TargetRefPolicyKindDescriptor[] = REGISTERED.filter(
  (kind): kind is TargetRefPolicyKindDescriptor => kind.targetRefPolicy !== undefined,
).sort(alphabetically);

/** The name of a targetRef policy kind (`MeshTimeout`). */
export type TargetRefPolicyKind = TargetRefPolicyKindDescriptor['name'];
/** The spec type of a targetRef policy kind, from its schema. */
export type TargetRefPolicySpecOf<K extends TargetRefPolicyKind> = Extract<TargetRefPolicyKindDescriptor, { name: K }> extends KindDescriptor<infer Spec> ? Spec : never;

export const targetRefPolicyKinds = (): readonly TargetRefPolicyKindDescriptor[] => TARGET_REF_POLICY_KINDS;

const targetRefPolicyKindNames = new Set<string>(TARGET_REF_POLICY_KINDS.map((kind) => kind.name));
export const isTargetRefPolicyKind = (name: string): name is TargetRefPolicyKind => targetRefPolicyKindNames.has(name);

/** Every policy kind, as mesh insights count them: the source/destination and selector kinds, then the targetRef ones. */
export const everyPolicyKind = (): readonly AnyKind[] => [...POLICY_KINDS, ...TARGET_REF_POLICY_KINDS];
export const isAnyPolicyKind = (name: string): boolean => isPolicyKind(name) || isTargetRefPolicyKind(name);

/** The `/policies` catalogue, sorted by name code unit as the reference sorts it. */
export const catalogueKinds = (): AnyKind[] => KINDS.filter((k) => k.inCatalogue).sort(inNameOrder);
