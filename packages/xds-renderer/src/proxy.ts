// A proxy's whole configuration (docs/xds.md, What a proxy receives): the generators of the `default-proxy` profile (a
// builtin gateway's in place of inbounds and outbounds) over one prepared mesh context, unless a
// ProxyTemplate leaves them out; the template's raw resources; then the targetRef policies in the
// reference's order and the template's modifications (docs/policies.md, What each policy does to
// the proxy; ProxyTemplate).
import { type DataplaneResource, type GatewayMatch, type MatchedPolicies, matchGateway, matchPolicies, type TargetRefMatch, targetRefRulesOf } from '@mesh/policy-matcher';
import { renderAuxiliary } from './auxiliary.js';
import type { Cluster, ClusterLoadAssignment, Listener, Secret, TypedObject } from './envoy.js';
import { renderGateway } from './gateway.js';
import { renderInbounds } from './inbound.js';
import type { MeshContext } from './mesh-context.js';
import { renderOutbounds } from './outbound.js';
import { applyTargetRefPolicies } from './plugins/index.js';
import { type ProxyMetadata, type ProxyState, proxyStateOf } from './proxy-state.js';
import { addRawResources, applyTemplateModifications, importsDefaultProfile } from './proxy-template.js';
import { ORIGIN, ResourceSet } from './resource-set.js';
import { meshSecrets } from './tls.js';

/** The resources of one proxy by xDS type, each list in name order. */
export interface ProxyConfig {
  readonly listeners: readonly Listener[];
  readonly clusters: readonly Cluster[];
  /** Shared between proxies of the mesh context (one object per cluster): read-only. */
  readonly endpoints: readonly ClusterLoadAssignment[];
  /** Route configurations travel inline in their listeners, as the reference sends them: always empty. */
  readonly routes: readonly TypedObject[];
  readonly secrets: readonly Secret[];
}

export interface ProxyInput {
  readonly context: MeshContext;
  readonly dataplane: DataplaneResource;
  /** The policies `matchPolicies` picked for the dataplane; matched here against the context when absent. */
  readonly policies?: MatchedPolicies;
  /** The targetRef policies selecting the dataplane and their rules (`matchTargetRefPolicies`); none when absent. */
  readonly targetRef?: TargetRefMatch;
  /** A builtin gateway's listeners and routes (`matchGateway`); matched here against the context when absent. */
  readonly gateway?: GatewayMatch;
  readonly metadata?: ProxyMetadata;
}

/**
 * The sidecar's generators: admin, metrics and tracing, inbounds, outbounds and the mesh's
 * secrets; a builtin gateway's listeners, routes and clusters in place of inbounds and outbounds.
 */
function renderDefaultProfile(state: ProxyState, resources: ResourceSet, targetRef: TargetRefMatch | undefined, gateway: GatewayMatch | undefined): void {
  const { context, metadata } = state;
  renderAuxiliary(state, resources);
  if (gateway) renderGateway(state, gateway, resources);
  const inbound = renderInbounds(state);
  for (const listener of inbound.listeners) resources.addListener(ORIGIN.inbound, listener);
  for (const cluster of inbound.clusters) resources.addCluster(ORIGIN.inbound, cluster);
  // Any rule of a MeshHTTPRoute for the proxy hands its HTTP outbounds to the route (as the reference does).
  const httpRoutes = targetRef && targetRefRulesOf(targetRef, 'MeshHTTPRoute');
  const outbound = renderOutbounds(state, { skipHttp: (httpRoutes?.to.length ?? 0) > 0 });
  for (const listener of outbound.listeners) resources.addListener(ORIGIN.outbound, listener);
  for (const cluster of outbound.clusters) resources.addCluster(ORIGIN.outbound, cluster);
  for (const assignment of outbound.endpoints) resources.addEndpoints(ORIGIN.outbound, assignment);
  if (context.mtls && metadata.identity) for (const secret of meshSecrets(context.name, metadata.identity)) resources.secrets.add(ORIGIN.secrets, secret.name, secret);
}

/** Renders a sidecar's (or a delegated or builtin gateway's) Envoy resources. */
export function renderProxyConfig(input: ProxyInput): ProxyConfig {
  const { context, dataplane, targetRef } = input;
  const policies = input.policies ?? matchPolicies(dataplane, context.policies);
  const metadata = input.metadata ?? {};
  const template = policies.proxyTemplate;
  // The targetRef modules and template modifications edit resources in place: shared ones only go to proxies nothing edits.
  const targetRefApplies = targetRef !== undefined && targetRef.kinds.length > 0;
  const state = proxyStateOf(context, dataplane, policies, metadata, !targetRefApplies && template === undefined);
  const resources = new ResourceSet();
  const gateway = policies.isBuiltinGateway ? (input.gateway ?? matchGateway(dataplane, context.policies)) : undefined;
  if (importsDefaultProfile(template)) renderDefaultProfile(state, resources, targetRef, gateway);
  addRawResources(resources, template);
  if (targetRefApplies) applyTargetRefPolicies({ state, resources, match: targetRef });
  applyTemplateModifications(resources, template);
  return {
    listeners: resources.listeners.sorted(),
    clusters: resources.clusters.sorted(),
    endpoints: resources.endpoints.sorted(),
    routes: resources.routes.sorted(),
    secrets: resources.secrets.sorted(),
  };
}
