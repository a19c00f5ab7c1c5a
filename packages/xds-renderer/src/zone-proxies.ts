// Zone ingress and zone egress (a simpler rendering than the reference's): one TLS-inspecting
// listener whose chains pick a mesh service by SNI, and a `<mesh>:<service>` cluster per service.
// Ingresses pass mTLS through to local dataplanes; egresses pass it through to other zones'
// ingresses, and terminate it to call external services.
import { DataplaneSpecSchema, type MeshLoadBalancingStrategyConf, SERVICE_TAG, type TagMap } from '@mesh/model';
import { computeRule, type DataplaneResource, matchPolicies, type PolicyOf, type TargetRefIndex, type TargetRefPolicyOf, zoneEgressRulesOf } from '@mesh/policy-matcher';
import { renderAdminCluster } from './auxiliary.js';
import { configureEds, configureProvidedEndpoints, configureUpstreamHttpFor, newCluster } from './clusters.js';
import { type Cluster, type ClusterLoadAssignment, FILTER, type JsonObject, type Listener, socketAddress, TYPE, typedExtension } from './envoy.js';
import { httpConnectionManager, httpConnectionManagerFilter, rbacFilter, tcpProxy } from './filters.js';
import { tlsInspector } from './inbound.js';
import { type AvailableService, buildLoadAssignment, type Endpoint, type MeshContext, type ZoneEgressResource, type ZoneIngressResource } from './mesh-context.js';
import { inboundListenerName, meshClusterName, outboundRouteName, sniFromTags, sortedTagKeys, tagsKey, tagsWithout } from './names.js';
import { commonProtocolOf, isHttpLike } from './protocol.js';
import { configureInlineEndpoints, isLocalityAware, localityAwareAssignment } from './plugins/mesh-load-balancing-strategy.js';
import { meshTrafficPermissionFilter } from './plugins/mesh-traffic-permission.js';
import type { ProxyConfig } from './proxy.js';
import { downstreamMeshTls, type MeshIdentity, meshSecrets, tlsTransportSocket, upstreamExternalTls } from './tls.js';

export interface ZoneProxyMetadata {
  /** Envoy's admin port; default `networking.admin.port`, else 9901. */
  readonly adminPort?: number;
  /** Egress only: the mesh certificate per mesh, to render the Secrets its mTLS refers to. */
  readonly identities?: ReadonlyMap<string, MeshIdentity>;
}

const byName = <T extends { name: string }>(items: T[]): T[] => items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

type TargetRef = TargetRefPolicyOf<'MeshHTTPRoute'>['spec']['targetRef'];

/** The destination tags a targetRef names (`*` for every service); none for other kinds. */
function destinationOfTargetRef(targetRef: TargetRef): TagMap | undefined {
  switch (targetRef.kind) {
    case 'MeshService':
      return { [SERVICE_TAG]: targetRef.name ?? '' };
    case 'MeshServiceSubset':
      return { ...targetRef.tags, [SERVICE_TAG]: targetRef.name ?? '' };
    case 'Mesh':
      return { [SERVICE_TAG]: '*' };
    case 'MeshSubset':
      return { ...targetRef.tags, [SERVICE_TAG]: '*' };
    default:
      return undefined;
  }
}

/**
 * Destination tag sets the mesh's routes send traffic to, by service (`*` for all services): the
 * TrafficRoutes' destinations, and the MeshHTTPRoutes' destinations and backends (with any
 * MeshHTTPRoute, traffic flows to every service by default).
 */
function routeDestinations(context: MeshContext, targetRefPolicies: TargetRefIndex | undefined): Map<string, TagMap[]> {
  const destinations = new Map<string, TagMap[]>();
  const add = (tags: TagMap | undefined): void => {
    if (!tags) return;
    const service = tags[SERVICE_TAG] ?? '';
    const known = destinations.get(service) ?? [];
    if (!known.some((other) => tagsKey(other) === tagsKey(tags))) destinations.set(service, [...known, tags]);
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
  const httpRoutes = targetRefPolicies?.routes ?? [];
  if (httpRoutes.length > 0) add({ [SERVICE_TAG]: '*' });
  for (const route of httpRoutes) {
    for (const to of route.spec.to ?? []) {
      const destination = destinationOfTargetRef(to.targetRef);
      if (!destination) continue;
      for (const rule of to.rules ?? []) {
        const backendRefs = rule.default.backendRefs;
        if (backendRefs === undefined) add(destination);
        else for (const backendRef of backendRefs) add(destinationOfTargetRef(backendRef));
      }
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

interface ZoneProxyOutput {
  readonly chains: JsonObject[];
  readonly clusters: Cluster[];
  readonly endpoints: ClusterLoadAssignment[];
}

/**
 * Services forwarded by SNI without terminating TLS: a chain per destination a route may ask for
 * (`<service>{mesh=<mesh>,...}`), and for each service with endpoints an EDS cluster with subsets
 * by the destinations' tag keys.
 */
function addSniForwarding(
  context: MeshContext,
  targetRefPolicies: TargetRefIndex | undefined,
  available: readonly AvailableService[],
  endpointsByService: ReadonlyMap<string, readonly Endpoint[]>,
  out: ZoneProxyOutput,
  assignmentOf: (service: string, assignment: ClusterLoadAssignment) => ClusterLoadAssignment = (_service, assignment) => assignment,
): void {
  const destinations = routeDestinations(context, targetRefPolicies);
  for (const service of [...endpointsByService.keys()].sort()) {
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
    out.clusters.push(cluster);
    out.endpoints.push(assignmentOf(service, buildLoadAssignment(clusterName, endpointsByService.get(service) ?? [])));
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
      out.chains.push({ filterChainMatch: { serverNames: [sni], transportProtocol: 'tls' }, filters: [typedExtension(FILTER.tcpProxy, proxy)] });
    }
  }
}

const byMeshName = (meshes: readonly MeshContext[]): MeshContext[] => [...meshes].sort((a, b) => (a.name < b.name ? -1 : 1));

/**
 * A zone ingress: traffic from other zones, still encrypted, forwarded by SNI to this zone's
 * dataplanes. The targetRef policies of each mesh (by mesh name) add their routes' destinations.
 */
export function renderZoneIngressConfig(
  ingress: ZoneIngressResource,
  meshes: readonly MeshContext[],
  metadata: ZoneProxyMetadata = {},
  targetRefPolicies: ReadonlyMap<string, TargetRefIndex> = new Map(),
): ProxyConfig {
  const { address = '', port = 0 } = ingress.spec.networking ?? {};
  const listener = ingressListenerBase(address, port);
  const out: ZoneProxyOutput = { chains: listener.filterChains as JsonObject[], clusters: [renderAdminCluster(adminPortOf(metadata, ingress.spec))], endpoints: [] };
  for (const context of byMeshName(meshes)) {
    const available = (ingress.spec.availableServices ?? []).filter((service) => (service.mesh ?? '') === context.name);
    const availableServices = new Set(available.map((service) => service.tags?.[SERVICE_TAG] ?? ''));
    addSniForwarding(context, targetRefPolicies.get(context.name), available, localEndpoints(context.state.dataplanes, availableServices), out);
  }
  return { listeners: out.chains.length > 0 ? [listener] : [], clusters: byName(out.clusters), endpoints: out.endpoints, routes: [], secrets: [] };
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

/**
 * Services of other zones a zone egress forwards to their zone's ingress: distinct available
 * services of the remote ingresses (external services left to the egress itself), and the
 * ingresses as their endpoints.
 */
function remoteServices(context: MeshContext): { available: AvailableService[]; endpoints: Map<string, Endpoint[]> } {
  const available: AvailableService[] = [];
  const endpoints = new Map<string, Endpoint[]>();
  const seen = new Set<string>();
  for (const ingress of context.remoteIngresses()) {
    for (const service of ingress.services) {
      if (service.externalService) continue;
      const tags = service.tags ?? {};
      const name = tags[SERVICE_TAG] ?? '';
      const key = tagsKey(tags);
      if (!seen.has(key)) {
        seen.add(key);
        available.push(service);
      }
      endpoints.set(name, [...(endpoints.get(name) ?? []), { address: ingress.address, port: ingress.port, tags, weight: service.instances ?? 0 }]);
    }
  }
  return { available, endpoints };
}

/** The load balancing conf a zone egress applies to a service's clients as a whole, when it is locality aware. */
function egressLoadBalancing(tags: TagMap, policies: TargetRefIndex | undefined): MeshLoadBalancingStrategyConf | undefined {
  if (!policies) return undefined;
  const conf = computeRule(zoneEgressRulesOf('MeshLoadBalancingStrategy', tags, policies), [])?.conf;
  return conf && isLocalityAware(conf) ? conf : undefined;
}

/**
 * The RBAC filter of an external service's chain: the MeshTrafficPermissions' once the mesh has
 * any (a service none selects then lets nobody in, as in the reference), else the TrafficPermission's.
 */
function externalServiceRbac(context: MeshContext, tags: TagMap, statPrefix: string, policies: TargetRefIndex | undefined): JsonObject {
  if (policies && policies.ranked('MeshTrafficPermission').length > 0) {
    return meshTrafficPermissionFilter(statPrefix, zoneEgressRulesOf('MeshTrafficPermission', tags, policies), context.name);
  }
  return rbacFilter(tags[SERVICE_TAG] ?? '', permissionFor(context, tags));
}

const NO_PROXY_TAGS: ReadonlyMap<string, readonly string[]> = new Map();

/**
 * A zone egress: mesh proxies reach external services through it, authenticated by mesh mTLS, and
 * services of other zones, still encrypted, forwarded to their zone's ingress. The targetRef
 * policies of each mesh (by mesh name) give the external services' permissions and every
 * service's locality awareness.
 */
export function renderZoneEgressConfig(
  egress: ZoneEgressResource,
  meshes: readonly MeshContext[],
  metadata: ZoneProxyMetadata = {},
  targetRefPolicies: ReadonlyMap<string, TargetRefIndex> = new Map(),
): ProxyConfig {
  const { address = '', port = 0 } = egress.spec.networking ?? {};
  const listener = ingressListenerBase(address, port);
  const out: ZoneProxyOutput = { chains: listener.filterChains as JsonObject[], clusters: [renderAdminCluster(adminPortOf(metadata, egress.spec))], endpoints: [] };
  const secrets = [];
  for (const context of byMeshName(meshes)) {
    // Egress traffic is identified by mesh mTLS only.
    if (!context.mtls) continue;
    const policies = targetRefPolicies.get(context.name);
    const scope = { localZone: context.state.localZone ?? '', throughEgress: false };
    const identity = metadata.identities?.get(context.name);
    if (identity) secrets.push(...meshSecrets(context.name, identity));

    const remote = remoteServices(context);
    addSniForwarding(context, policies, remote.available, remote.endpoints, out, (service, assignment) => {
      const conf = egressLoadBalancing({ [SERVICE_TAG]: service }, policies);
      return conf ? localityAwareAssignment(scope, assignment, conf, NO_PROXY_TAGS) : assignment;
    });

    const externalServices = [...(context.state.snapshot.externalServices ?? [])].sort((a, b) => (tagsKey(a.spec.tags ?? {}) < tagsKey(b.spec.tags ?? {}) ? -1 : 1));
    const seen = new Set<string>();
    for (const externalService of externalServices) {
      const tags = externalService.spec.tags ?? {};
      const service = tags[SERVICE_TAG] ?? '';
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
      const balancing = egressLoadBalancing(tags, policies);
      if (balancing) configureInlineEndpoints(scope, cluster, clusterName, balancing, NO_PROXY_TAGS);
      out.clusters.push(cluster);

      const filters: JsonObject[] = [externalServiceRbac(context, tags, listener.name, policies)];
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
      out.chains.push({
        name: `${service}_${context.name}`,
        filterChainMatch: { serverNames: [sniFromTags({ [SERVICE_TAG]: service, mesh: context.name })], transportProtocol: 'tls' },
        filters,
        transportSocket: tlsTransportSocket(downstreamMeshTls(context.name)),
      });
    }
  }
  return { listeners: out.chains.length > 0 ? [listener] : [], clusters: byName(out.clusters), endpoints: out.endpoints, routes: [], secrets };
}
