// Zone ingress and zone egress (a simpler rendering than the reference's): one TLS-inspecting
// listener whose chains pick a mesh service by SNI, and a `<mesh>:<service>` cluster per service.
// Ingresses pass mTLS through to local dataplanes; egresses terminate it and call external services.
import { DataplaneSpecSchema, SERVICE_TAG, type TagMap } from '@mesh/model';
import { type DataplaneResource, matchPolicies, type PolicyOf } from '@mesh/policy-matcher';
import { renderAdminCluster } from './auxiliary.js';
import { configureEds, configureProvidedEndpoints, configureUpstreamHttpFor, newCluster } from './clusters.js';
import { type Cluster, type ClusterLoadAssignment, FILTER, type JsonObject, type Listener, socketAddress, TYPE, typedExtension } from './envoy.js';
import { httpConnectionManager, httpConnectionManagerFilter, rbacFilter, tcpProxy } from './filters.js';
import { tlsInspector } from './inbound.js';
import { buildLoadAssignment, type Endpoint, type MeshContext, type ZoneEgressResource, type ZoneIngressResource } from './mesh-context.js';
import { inboundListenerName, meshClusterName, outboundRouteName, sniFromTags, sortedTagKeys, tagsKey, tagsWithout } from './names.js';
import { commonProtocolOf, isHttpLike } from './protocol.js';
import type { ProxyConfig } from './proxy.js';
import { downstreamMeshTls, type MeshIdentity, meshSecrets, tlsTransportSocket, upstreamExternalTls } from './tls.js';

export interface ZoneProxyMetadata {
  /** Envoy's admin port; default `networking.admin.port`, else 9901. */
  readonly adminPort?: number;
  /** Egress only: the mesh certificate per mesh, to render the Secrets its mTLS refers to. */
  readonly identities?: ReadonlyMap<string, MeshIdentity>;
}

const byName = <T extends { name: string }>(items: T[]): T[] => items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

/** Destination tag sets the mesh's TrafficRoutes send traffic to, by service (`*` for all services). */
function routeDestinations(context: MeshContext): Map<string, TagMap[]> {
  const destinations = new Map<string, TagMap[]>();
  const add = (tags: TagMap | undefined): void => {
    if (!tags) return;
    const service = tags[SERVICE_TAG] ?? '';
    destinations.set(service, [...(destinations.get(service) ?? []), tags]);
  };
  for (const route of context.state.snapshot.policies.TrafficRoute ?? []) {
    const conf = route.spec.conf;
    if (conf?.destination) add(conf.destination);
    for (const split of conf?.split ?? []) add(split.destination);
    for (const http of conf?.http ?? []) {
      if (http.destination) add(http.destination);
      for (const split of http.split ?? []) add(split.destination);
    }
  }
  return destinations;
}

const ingressListenerBase = (address: string, port: number): Listener => ({
  '@type': TYPE.listener,
  name: inboundListenerName(address, port),
  address: socketAddress(address, port),
  enableReusePort: false,
  trafficDirection: 'INBOUND',
  listenerFilters: [tlsInspector()],
  filterChains: [],
});

const adminPortOf = (metadata: ZoneProxyMetadata, spec: { networking?: { admin?: { port?: number | undefined } | undefined } | undefined }): number =>
  metadata.adminPort ?? spec.networking?.admin?.port ?? 9901;

/** A zone ingress: traffic from other zones, still encrypted, forwarded by SNI to this zone's dataplanes. */
export function renderZoneIngressConfig(ingress: ZoneIngressResource, meshes: readonly MeshContext[], metadata: ZoneProxyMetadata = {}): ProxyConfig {
  const { address = '', port = 0 } = ingress.spec.networking ?? {};
  const listener = ingressListenerBase(address, port);
  const chains = listener.filterChains as JsonObject[];
  const clusters: Cluster[] = [renderAdminCluster(adminPortOf(metadata, ingress.spec))];
  const endpoints: ClusterLoadAssignment[] = [];
  for (const context of [...meshes].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const available = (ingress.spec.availableServices ?? []).filter((service) => (service.mesh ?? '') === context.name);
    const availableServices = new Set(available.map((service) => service.tags?.[SERVICE_TAG] ?? ''));
    const destinations = routeDestinations(context);
    const local = localEndpoints(context.state.dataplanes, availableServices);
    for (const service of [...local.keys()].sort()) {
      const clusterName = meshClusterName(context.name, service);
      const cluster = newCluster(clusterName);
      configureEds(cluster);
      // Subsets by every tag combination a route may ask for.
      const keySets = new Map<string, string[]>();
      for (const tags of [...(destinations.get(service) ?? []), ...(destinations.get('*') ?? [])]) {
        const keys = sortedTagKeys(tagsWithout(tags, SERVICE_TAG));
        if (keys.length > 0) keySets.set(keys.join(','), keys);
      }
      if (keySets.size > 0) {
        cluster.lbSubsetConfig = {
          fallbackPolicy: 'ANY_ENDPOINT',
          subsetSelectors: [...keySets.keys()].sort().map((key) => ({ keys: keySets.get(key) ?? [], fallbackPolicy: 'NO_FALLBACK' })),
        };
      }
      cluster.connectTimeout = '10s';
      clusters.push(cluster);
      endpoints.push(buildLoadAssignment(clusterName, local.get(service) ?? []));
    }
    const sniUsed = new Set<string>();
    for (const service of available) {
      const serviceName = service.tags?.[SERVICE_TAG] ?? '';
      const clusterName = meshClusterName(context.name, serviceName);
      for (const destination of [...(destinations.get(serviceName) ?? []), ...(destinations.get('*') ?? [])]) {
        const sni = sniFromTags({ ...destination, [SERVICE_TAG]: serviceName, mesh: context.name });
        if (sniUsed.has(sni)) continue;
        sniUsed.add(sni);
        const proxy = tcpProxy(clusterName, [{ name: clusterName, weight: 0 }]);
        const subset = tagsWithout(destination, SERVICE_TAG);
        for (const key of Object.keys(subset)) if (subset[key] === '*') delete subset[key];
        if (Object.keys(subset).length > 0) proxy.metadataMatch = { filterMetadata: { 'envoy.lb': subset } };
        chains.push({ filterChainMatch: { serverNames: [sni], transportProtocol: 'tls' }, filters: [typedExtension(FILTER.tcpProxy, proxy)] });
      }
    }
  }
  return { listeners: chains.length > 0 ? [listener] : [], clusters: byName(clusters), endpoints, routes: [], secrets: [] };
}

/** Healthy inbounds of the given services, at their advertised addresses. */
function localEndpoints(dataplanes: readonly DataplaneResource[], services: ReadonlySet<string>): Map<string, Endpoint[]> {
  const result = new Map<string, Endpoint[]>();
  for (const dataplane of dataplanes) {
    const networking = dataplane.spec.networking;
    for (const inbound of networking?.inbound ?? []) {
      if (inbound.health !== undefined && inbound.health.ready !== true) continue;
      const tags = inbound.tags ?? {};
      const service = tags[SERVICE_TAG] ?? '';
      if (!services.has(service)) continue;
      const address = networking?.advertisedAddress || inbound.address || networking?.address || '';
      result.set(service, [...(result.get(service) ?? []), { address, port: inbound.port ?? 0, tags, weight: 1 }]);
    }
  }
  return result;
}

/** The TrafficPermission chosen by an external service's tags, as for an inbound with those tags. */
function permissionFor(context: MeshContext, tags: TagMap): PolicyOf<'TrafficPermission'> | undefined {
  const spec = DataplaneSpecSchema.parse({ networking: { address: '0.0.0.0', inbound: [{ port: 1, tags }] } });
  const probe: DataplaneResource = { mesh: context.name, name: '', spec };
  return matchPolicies(probe, context.policies).inbounds[0]?.trafficPermission;
}

/** A zone egress: mesh proxies reach external services through it, authenticated by mesh mTLS. */
export function renderZoneEgressConfig(egress: ZoneEgressResource, meshes: readonly MeshContext[], metadata: ZoneProxyMetadata = {}): ProxyConfig {
  const { address = '', port = 0 } = egress.spec.networking ?? {};
  const listener = ingressListenerBase(address, port);
  const chains = listener.filterChains as JsonObject[];
  const clusters: Cluster[] = [renderAdminCluster(adminPortOf(metadata, egress.spec))];
  const secrets = [];
  for (const context of [...meshes].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    // Egress traffic is identified by mesh mTLS only.
    if (!context.mtls) continue;
    const identity = metadata.identities?.get(context.name);
    if (identity) secrets.push(...meshSecrets(context.name, identity));
    const externalServices = [...(context.state.snapshot.externalServices ?? [])].sort((a, b) => (tagsKey(a.spec.tags ?? {}) < tagsKey(b.spec.tags ?? {}) ? -1 : 1));
    const seen = new Set<string>();
    for (const externalService of externalServices) {
      const service = externalService.spec.tags?.[SERVICE_TAG] ?? '';
      const endpoint = context.externalServiceEndpoint(externalService);
      if (!endpoint || seen.has(service)) continue;
      seen.add(service);
      const clusterName = meshClusterName(context.name, service);
      const protocol = commonProtocolOf([endpoint]);
      const tagged: Endpoint = { ...endpoint, tags: { ...endpoint.tags, mesh: context.name } };
      const cluster = newCluster(clusterName);
      configureProvidedEndpoints(cluster, [tagged], false);
      if (endpoint.externalService?.enabled) {
        cluster.transportSocketMatches = [
          { name: endpoint.address, match: tagsWithout(tagged.tags, SERVICE_TAG), transportSocket: tlsTransportSocket(upstreamExternalTls(endpoint.address, endpoint.externalService)) },
        ];
      }
      cluster.connectTimeout = '10s';
      configureUpstreamHttpFor(cluster, protocol);
      clusters.push(cluster);

      const filters: JsonObject[] = [rbacFilter(service, permissionFor(context, externalService.spec.tags ?? {}))];
      if (isHttpLike(protocol)) {
        const hcm = httpConnectionManager(service, false);
        const target = { cluster: clusterName, timeout: '0s' };
        hcm.routeConfig = {
          name: outboundRouteName(service),
          validateClusters: false,
          virtualHosts: [{ name: service, domains: ['*'], routes: [{ match: { prefix: '/' }, route: target }] }],
        };
        filters.push(httpConnectionManagerFilter(hcm));
      } else {
        filters.push(typedExtension(FILTER.tcpProxy, tcpProxy(service, [{ name: clusterName, weight: 0 }])));
      }
      chains.push({
        name: `${service}_${context.name}`,
        filterChainMatch: { serverNames: [sniFromTags({ [SERVICE_TAG]: service, mesh: context.name })], transportProtocol: 'tls' },
        filters,
        transportSocket: tlsTransportSocket(downstreamMeshTls(context.name)),
      });
    }
  }
  return { listeners: chains.length > 0 ? [listener] : [], clusters: byName(clusters), endpoints: [], routes: [], secrets };
}
