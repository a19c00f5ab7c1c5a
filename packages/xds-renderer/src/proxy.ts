// A sidecar's whole configuration (§4.1 step 3): the generators of the `default-proxy` profile
// over one prepared mesh context.
import { type DataplaneResource, type MatchedPolicies, matchPolicies } from '@mesh/policy-matcher';
import { renderAuxiliary } from './auxiliary.js';
import type { Cluster, ClusterLoadAssignment, Listener, Secret, TypedObject } from './envoy.js';
import { renderInbounds } from './inbound.js';
import type { MeshContext } from './mesh-context.js';
import { renderOutbounds } from './outbound.js';
import { type ProxyMetadata, proxyStateOf } from './proxy-state.js';
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
  readonly metadata?: ProxyMetadata;
}

/** One resource per name (a later one replaces an earlier), in name order. */
function byName<T>(resources: Iterable<T>, nameOf: (resource: T) => string): T[] {
  const unique = new Map<string, T>();
  for (const resource of resources) unique.set(nameOf(resource), resource);
  return [...unique.keys()].sort().map((name) => unique.get(name) as T);
}

/** Renders a sidecar's (or delegated gateway's) Envoy resources. */
export function renderProxyConfig(input: ProxyInput): ProxyConfig {
  const { context, dataplane } = input;
  const policies = input.policies ?? matchPolicies(dataplane, context.policies);
  const metadata = input.metadata ?? {};
  const state = proxyStateOf(context, dataplane, policies, metadata);
  const auxiliary = renderAuxiliary(state);
  const inbound = renderInbounds(state);
  const outbound = renderOutbounds(state);
  const secrets = context.mtls && metadata.identity ? meshSecrets(context.name, metadata.identity) : [];
  return {
    listeners: byName([...auxiliary.listeners, ...inbound.listeners, ...outbound.listeners], (listener) => listener.name),
    clusters: byName([...auxiliary.clusters, ...inbound.clusters, ...outbound.clusters], (cluster) => cluster.name),
    endpoints: byName(outbound.endpoints, (assignment) => assignment.clusterName),
    routes: [],
    secrets,
  };
}
