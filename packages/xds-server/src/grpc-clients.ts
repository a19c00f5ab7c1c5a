// Proxyless gRPC clients (docs/xds.md, Proxyless gRPC): a gRPC library's xDS resolver asks for a
// listener named after the target (`xds:///backend` asks for `backend`), and expects an API
// listener holding an HTTP connection manager with its routes inline, EDS clusters and endpoints
// with locality weights. The client's dataplane is rendered as a sidecar with one outbound per
// service it asks for, and the outbounds' routes and clusters are reshaped into that form.
import { type DataplaneSpec, SERVICE_TAG } from '@mesh/model';
import type { DataplaneResource } from '@mesh/policy-matcher';
import {
  type Cluster,
  type ClusterLoadAssignment,
  ENVOY_TYPE_URLS,
  type JsonObject,
  type Listener,
  type MeshContext,
  type ProxyConfig,
  renderProxyConfig,
} from '@mesh/xds-renderer';

const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
/** Outbound ports of the rendered stand-in; nothing listens on them. */
const FIRST_PORT = 20000;
const LOOPBACK = '127.0.0.1';

export interface GrpcClientInput {
  readonly context: MeshContext;
  readonly dataplane: DataplaneResource;
  /** The services the client asked listeners for, sorted. */
  readonly services: readonly string[];
}

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

interface RouteTarget {
  cluster?: string;
  weightedClusters?: { clusters: Array<{ name: string; weight: number }> };
}

/** The first filter of an outbound listener's chain. */
function outboundFilter(listener: Listener): JsonObject | undefined {
  const chains = Array.isArray(listener.filterChains) ? listener.filterChains : [];
  const first = chains[0];
  const filters = isObject(first) && Array.isArray(first.filters) ? first.filters : [];
  const filter = filters.find((candidate) => isObject(candidate) && isObject(candidate.typedConfig));
  return isObject(filter) && isObject(filter.typedConfig) ? filter.typedConfig : undefined;
}

/** The routes of one outbound: inline routes of HTTP, or the one destination (or split) of TCP. */
function virtualHostsOf(service: string, filter: JsonObject | undefined): JsonObject[] {
  if (!filter) return [];
  if (filter['@type'] === HCM_TYPE && isObject(filter.routeConfig) && Array.isArray(filter.routeConfig.virtualHosts)) {
    return filter.routeConfig.virtualHosts.filter(isObject).map((host) => {
      // gRPC reads its own retry and timeout settings; the proxies' ones would not translate.
      const { retryPolicy: _retry, ...rest } = host;
      const routes = (Array.isArray(rest.routes) ? rest.routes : []).filter(isObject).map((route) => {
        const action = isObject(route.route) ? route.route : {};
        const { timeout: _timeout, ...target } = action;
        return { match: route.match ?? { prefix: '/' }, route: target };
      });
      return { ...rest, routes };
    });
  }
  const target: RouteTarget = {};
  if (typeof filter.cluster === 'string') target.cluster = filter.cluster;
  else if (isObject(filter.weightedClusters)) target.weightedClusters = filter.weightedClusters as unknown as RouteTarget['weightedClusters'] & object;
  else return [];
  return [{ name: service, domains: ['*'], routes: [{ match: { prefix: '/' }, route: target as JsonObject }] }];
}

function clustersOf(virtualHosts: readonly JsonObject[]): string[] {
  const names: string[] = [];
  for (const host of virtualHosts) {
    for (const route of Array.isArray(host.routes) ? host.routes : []) {
      const action = isObject(route) && isObject(route.route) ? route.route : {};
      if (typeof action.cluster === 'string') names.push(action.cluster);
      const weighted = isObject(action.weightedClusters) && Array.isArray(action.weightedClusters.clusters) ? action.weightedClusters.clusters : [];
      for (const entry of weighted) if (isObject(entry) && typeof entry.name === 'string') names.push(entry.name);
    }
  }
  return names;
}

/** The client's configuration: an API listener per service asked for, and the EDS clusters its routes use. */
export function renderGrpcClientConfig(input: GrpcClientInput): ProxyConfig {
  const { dataplane, services } = input;
  type Networking = NonNullable<DataplaneSpec['networking']>;
  const networking: Partial<Networking> = dataplane.spec.networking ?? {};
  const outbound: Networking['outbound'] = services.map((service, at) => ({ address: LOOPBACK, port: FIRST_PORT + at, tags: { [SERVICE_TAG]: service }, service: undefined }));
  // No redirection for a library: outbounds are explicit.
  const { transparentProxying: _redirect, ...rest } = networking;
  const standIn: DataplaneResource = { ...dataplane, spec: { ...dataplane.spec, networking: { ...rest, outbound } as Networking } };
  const rendered = renderProxyConfig({ context: input.context, dataplane: standIn });
  const listeners: Listener[] = [];
  const wanted = new Set<string>();
  services.forEach((service, at) => {
    const port = FIRST_PORT + at;
    const listener = rendered.listeners.find((candidate) => {
      const address = isObject(candidate.address) && isObject(candidate.address.socketAddress) ? candidate.address.socketAddress : {};
      return candidate.trafficDirection === 'OUTBOUND' && address.portValue === port;
    });
    const virtualHosts = virtualHostsOf(service, listener && outboundFilter(listener));
    for (const name of clustersOf(virtualHosts)) wanted.add(name);
    listeners.push({
      '@type': ENVOY_TYPE_URLS.listener,
      name: service,
      apiListener: {
        apiListener: {
          '@type': HCM_TYPE,
          statPrefix: service,
          routeConfig: { name: service, virtualHosts },
          httpFilters: [{ name: 'envoy.filters.http.router', typedConfig: { '@type': ROUTER_TYPE } }],
        },
      },
    });
  });
  const clusters: Cluster[] = rendered.clusters
    .filter((cluster) => wanted.has(cluster.name) && cluster.type === 'EDS')
    .map((cluster) => ({
      '@type': ENVOY_TYPE_URLS.cluster,
      name: cluster.name,
      type: 'EDS',
      edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: 'V3' } },
      ...(cluster.connectTimeout ? { connectTimeout: cluster.connectTimeout } : {}),
    }));
  const endpoints: ClusterLoadAssignment[] = rendered.endpoints
    .filter((assignment) => wanted.has(assignment.clusterName))
    .map((assignment) => ({
      ...assignment,
      // gRPC refuses localities without a locality, and skips those without a weight.
      endpoints: (Array.isArray(assignment.endpoints) ? assignment.endpoints : []).map((locality) =>
        isObject(locality) ? { locality: {}, loadBalancingWeight: 1, ...locality } : locality,
      ),
    }));
  return { listeners, clusters, endpoints, routes: [], secrets: [] };
}
