// Outbound side (docs/xds.md, What a proxy receives): per outbound a listener routing to the TrafficRoute's destinations, and
// per destination a cluster (EDS inside the mesh, inline endpoints for external services) with
// its ClusterLoadAssignment.
import { SERVICE_TAG, type RateLimitSpec, type TagMap } from '@mesh/model';
import { type OutboundMatch, type ServiceMatch, splitWithDestination, type TrafficRouteConf, type TrafficRouteSplit } from '@mesh/policy-matcher';
import {
  configureCircuitBreakers,
  configureClusterTimeouts,
  configureEds,
  configureHealthCheck,
  configureLoadBalancer,
  configureOutlierDetection,
  configureProvidedEndpoints,
  configureUpstreamHttp,
  configureUpstreamHttpFor,
  type LoadBalancerConf,
  newCluster,
  type TimeoutConf,
} from './clusters.js';
import { type Cluster, type ClusterLoadAssignment, FILTER, type JsonObject, type Listener, socketAddress, TYPE, typedExtension } from './envoy.js';
import {
  accessLog,
  type AccessLogSubject,
  grpcStatsFilter,
  httpConnectionManager,
  httpConnectionManagerFilter,
  kafkaBrokerFilter,
  localRateLimitFilter,
  retryPolicy,
  routeRateLimit,
  tcpProxy,
  tracing,
} from './filters.js';
import { buildLoadAssignment, objectId, splitHostPort } from './mesh-context.js';
import { destinationClusterName, MESH_TAG, outboundListenerName, outboundRouteName, sniFromTags, TAGS_HEADER, tagsWithout } from './names.js';
import type { Protocol } from './protocol.js';
import { isExternalService, protocolOfServices, type ProxyState } from './proxy-state.js';
import { tlsTransportSocket, upstreamExternalTls, upstreamMeshTls } from './tls.js';

/** The service name zone egresses present in their certificates. */
const ZONE_EGRESS_SERVICE = 'zone-egress';

type HttpRoute = NonNullable<TrafficRouteConf['http']>[number];

/** One destination of a route. */
interface Destination {
  readonly name: string;
  readonly service: string;
  /** The destination's tags but `mesh.io/mesh`. */
  readonly tags: TagMap;
  readonly weight: number;
  readonly external: boolean;
  /** Set when the destination lives in another mesh. */
  readonly otherMesh: string | undefined;
  readonly timeout: TimeoutConf | undefined;
  readonly loadBalancer: LoadBalancerConf | undefined;
}

interface OutboundRoute {
  readonly match: HttpRoute['match'];
  readonly modify: HttpRoute['modify'];
  readonly destinations: readonly Destination[];
  /** Only toward external services reached directly: otherwise their inbound side limits. */
  readonly rateLimit: RateLimitSpec | undefined;
}

/** Everything the outbound listeners of one proxy reach, by service. */
interface ReachedService {
  readonly destinations: Map<string, Destination>;
  external: boolean;
}

/** Where a cluster sends traffic: a service, or the subset of its endpoints with some tags. */
export interface ClusterTarget {
  readonly name: string;
  readonly service: string;
  /** The tags the endpoints must have (the service's among them), `mesh.io/mesh` aside. */
  readonly tags: TagMap;
  /** Set when the destination lives in another mesh. */
  readonly otherMesh: string | undefined;
}

/**
 * A cluster of a service as any generator of the outbound side builds it, before policies: EDS
 * (mesh services, external services through a zone egress) with mesh mTLS, or the endpoints of
 * an external service given inline with their TLS; HTTP/2 inside the mesh.
 */
export function renderServiceCluster(state: ProxyState, target: ClusterTarget, external: boolean, protocol: Protocol): Cluster {
  const context = state.context;
  const cluster = newCluster(target.name);
  if (external) {
    if (context.zoneEgressEnabled) {
      configureEds(cluster);
      configureMeshTls(state, cluster, target, ZONE_EGRESS_SERVICE);
    } else {
      const endpoints = state.externalEndpoints.get(target.service) ?? [];
      configureProvidedEndpoints(cluster, endpoints, state.ipv6);
      const matches = endpoints
        .filter((endpoint) => endpoint.externalService?.enabled)
        .map((endpoint) => ({
          name: endpoint.address,
          match: tagsWithout(endpoint.tags, SERVICE_TAG),
          transportSocket: tlsTransportSocket(upstreamExternalTls(endpoint.address, endpoint.externalService ?? NO_EXTERNAL_TLS)),
        }));
      if (matches.length > 0) cluster.transportSocketMatches = matches;
    }
    configureUpstreamHttpFor(cluster, protocol);
  } else {
    configureEds(cluster);
    configureUpstreamHttp(cluster, 'http2');
    // Clusters of other meshes need those meshes' CAs, which this mesh's state does not hold.
    if (target.otherMesh === undefined) configureMeshTls(state, cluster, target, target.service);
  }
  return cluster;
}

/** mTLS toward the destination when the mesh has it (in PERMISSIVE mode only to TLS-ready services). */
export function configureMeshTls(state: ProxyState, cluster: Cluster, target: ClusterTarget, upstreamService: string): void {
  const context = state.context;
  if (!context.mtls) return;
  if (context.mtls.mode === 'PERMISSIVE' && !context.tlsReadyServices.has(target.service)) return;
  const sni = sniFromTags({ ...target.tags, mesh: context.name });
  cluster.transportSocket = tlsTransportSocket(upstreamMeshTls(context.name, upstreamService, sni));
}

/** The ClusterLoadAssignment of a cluster sent over EDS: shared between proxies, read-only. */
export const serviceLoadAssignment = (state: ProxyState, target: ClusterTarget): ClusterLoadAssignment =>
  target.otherMesh === undefined
    ? state.context.loadAssignment(target.name, target.tags)
    : // Other meshes' endpoints are not part of this mesh's state.
      buildLoadAssignment(target.name, []);

export interface OutboundOptions {
  /** HTTP and HTTP/2 outbounds are left to MeshHTTPRoute, which renders them when any of its rules apply to the proxy. */
  readonly skipHttp?: boolean;
}

/** Renders the outbound side of a proxy. */
class OutboundRenderer {
  private readonly reached = new Map<string, ReachedService>();
  private readonly servicePolicies: ReadonlyMap<string, ServiceMatch>;

  constructor(
    private readonly state: ProxyState,
    private readonly options: OutboundOptions,
  ) {
    this.servicePolicies = new Map(state.policies.services.map((entry) => [entry.service, entry]));
  }

  render(): { listeners: Listener[]; clusters: Cluster[]; endpoints: ClusterLoadAssignment[] } {
    const listeners = this.state.policies.outbounds.flatMap((outbound) => this.listener(outbound) ?? []);
    const clusters: Cluster[] = [];
    const endpoints: ClusterLoadAssignment[] = [];
    for (const service of [...this.reached.keys()].sort()) {
      const reached = this.reached.get(service);
      if (!reached) continue;
      const protocol = protocolOfServices(this.state, [service]);
      for (const destination of reached.destinations.values()) {
        clusters.push(this.sharedCluster(destination, reached.external, protocol));
        if (reached.external && !this.state.context.zoneEgressEnabled) continue;
        endpoints.push(serviceLoadAssignment(this.state, destination));
      }
    }
    return { listeners, clusters, endpoints };
  }

  private destinationsOf(split: readonly TrafficRouteSplit[], outbound: OutboundMatch, conf: TrafficRouteConf): Destination[] {
    const destinations: Destination[] = [];
    for (const entry of split) {
      // Envoy does not take weight 0: such a destination gets no traffic and no cluster.
      if (!entry.weight) continue;
      const tags = entry.destination ?? {};
      const service = tags[SERVICE_TAG] ?? '';
      destinations.push({
        name: destinationClusterName(tags),
        service,
        tags: tagsWithout(tags, MESH_TAG),
        weight: entry.weight,
        external: isExternalService(this.state, service),
        otherMesh: tags[MESH_TAG],
        timeout: outbound.timeout?.spec.conf,
        loadBalancer: conf.loadBalancer,
      });
    }
    return destinations;
  }

  private routesOf(outbound: OutboundMatch): OutboundRoute[] {
    const conf = outbound.routeConf;
    if (!conf) return [];
    const routes: OutboundRoute[] = [];
    const rateLimit = outbound.rateLimit?.spec;
    const add = (match: HttpRoute['match'], modify: HttpRoute['modify'], destinations: Destination[]): void => {
      if (destinations.length === 0) return;
      const limited = destinations.some((destination) => destination.external) && !this.state.context.zoneEgressEnabled;
      routes.push({ match, modify, destinations, rateLimit: limited ? rateLimit : undefined });
    };
    for (const http of conf.http ?? []) add(http.match, http.modify, this.destinationsOf(splitWithDestination(http), outbound, conf));
    add(undefined, undefined, this.destinationsOf(splitWithDestination(conf), outbound, conf));
    return routes;
  }

  /** The outbound's listener; undefined when MeshHTTPRoute renders it instead. */
  private listener(outbound: OutboundMatch): Listener | undefined {
    const { host, port } = splitHostPort(outbound.name) ?? { host: '', port: 0 };
    const routes = this.routesOf(outbound);
    const destinations = routes.flatMap((route) => route.destinations);
    const protocol = protocolOfServices(this.state, new Set(destinations.map((destination) => destination.service)));
    if (this.options.skipHttp && (protocol === 'http' || protocol === 'http2')) return undefined;
    for (const destination of destinations) {
      let reached = this.reached.get(destination.service);
      if (!reached) this.reached.set(destination.service, (reached = { destinations: new Map(), external: false }));
      reached.destinations.set(destination.name, destination);
      reached.external ||= destination.external;
    }
    const build = (): Listener => {
      const listener: Listener = {
        '@type': TYPE.listener,
        name: outboundListenerName(host, port),
        address: socketAddress(host, port),
        trafficDirection: 'OUTBOUND',
        filterChains: [this.filterChain(outbound, routes, destinations, protocol)],
        metadata: { filterMetadata: { 'io.mesh.tags': tagsWithout(outbound.tags, MESH_TAG) } },
      };
      if (this.state.transparentProxying) listener.bindToPort = false;
      return listener;
    };
    return this.state.shareResources ? this.state.context.shared(this.listenerKey(outbound, routes, protocol), build) : build();
  }

  /**
   * Everything an outbound listener is made of beyond the mesh state (see `listener` and
   * `filterChain`): the instances of one service calling through the same policies get one
   * listener. The proxy's own address and socket path only count when the chain logs.
   */
  private listenerKey(outbound: OutboundMatch, routes: readonly OutboundRoute[], protocol: Protocol): string {
    const state = this.state;
    const policies = this.servicePolicies.get(outbound.service);
    const logged = policies?.trafficLog !== undefined;
    const destinations = routes.map((route) =>
      [objectId(route.rateLimit), ...route.destinations.map((destination) => `${destination.name}:${destination.weight}:${destination.external}:${objectId(destination.timeout)}`)].join(','),
    );
    return [
      'listener',
      outbound.name,
      outbound.service,
      JSON.stringify(outbound.tags),
      protocol,
      objectId(outbound.routeConf),
      objectId(outbound.timeout),
      objectId(outbound.rateLimit),
      objectId(policies?.trafficLog),
      objectId(policies?.retry),
      objectId(state.policies.trafficTrace),
      state.identifyingService,
      logged ? state.address : '',
      logged ? state.accessLogSocketPath : '',
      state.tagsHeader,
      state.transparentProxying,
      destinations.join(';'),
    ].join('\u0000');
  }

  private filterChain(outbound: OutboundMatch, routes: OutboundRoute[], destinations: Destination[], protocol: Protocol): JsonObject {
    const state = this.state;
    const service = outbound.service;
    const policies = this.servicePolicies.get(service);
    const timeout = outbound.timeout?.spec.conf;
    const logBackend = policies?.trafficLog && state.context.loggingBackend(policies.trafficLog.spec.conf?.backend);
    const subject: AccessLogSubject = {
      mesh: state.context.name,
      direction: 'OUTBOUND',
      sourceService: state.identifyingService,
      destinationService: service,
      sourceAddress: state.address,
      accessLogSocketPath: state.accessLogSocketPath,
    };
    if (protocol === 'http' || protocol === 'http2' || protocol === 'grpc') {
      const hcm = httpConnectionManager(service, false);
      const trace = state.tracingBackend && tracing(state.tracingBackend, { service: state.identifyingService, direction: 'OUTBOUND', destination: service });
      if (trace) hcm.tracing = trace;
      // Kept for external services reached without zone egress (the limits sit on their routes).
      if (!state.context.zoneEgressEnabled && outbound.rateLimit) hcm.httpFilters.push(localRateLimitFilter());
      if (protocol === 'grpc') hcm.httpFilters.push(grpcStatsFilter());
      const log = logBackend && accessLog(logBackend, subject, 'http');
      if (log) hcm.accessLog = [log];
      const virtualHost: JsonObject = { name: service, domains: ['*'], routes: routes.map((route) => this.httpRoute(route)) };
      const retry = retryPolicy(policies?.retry, protocol);
      if (retry) virtualHost.retryPolicy = retry;
      const routeConfig: JsonObject = { name: outboundRouteName(service), validateClusters: false, virtualHosts: [virtualHost] };
      const tagsHeader = state.tagsHeader;
      if (tagsHeader) routeConfig.requestHeadersToAdd = [{ header: { key: TAGS_HEADER, value: tagsHeader } }];
      hcm.routeConfig = routeConfig;
      hcm.commonHttpProtocolOptions = { idleTimeout: timeout?.http?.idleTimeout ?? '0s' };
      hcm.streamIdleTimeout =
        protocol === 'grpc' ? (timeout?.http?.streamIdleTimeout ?? timeout?.grpc?.streamIdleTimeout ?? '0s') : (timeout?.http?.streamIdleTimeout ?? '0s');
      return { filters: [httpConnectionManagerFilter(hcm)] };
    }
    const filters: JsonObject[] = [];
    if (protocol === 'kafka') filters.push(kafkaBrokerFilter(service));
    // Without a route there is nothing to proxy to: the chain stays empty.
    if (destinations.length > 0) {
      const proxy = tcpProxy(service, destinations);
      const log = logBackend && accessLog(logBackend, subject, 'network');
      if (log) proxy.accessLog = [log];
      const maxConnectAttempts = policies?.retry?.spec.conf?.tcp?.maxConnectAttempts;
      if (policies?.retry?.spec.conf?.tcp) proxy.maxConnectAttempts = maxConnectAttempts ?? 0;
      proxy.idleTimeout = timeout?.tcp?.idleTimeout ?? '0s';
      filters.push(typedExtension(FILTER.tcpProxy, proxy));
    }
    return filters.length > 0 ? { filters } : {};
  }

  private httpRoute(route: OutboundRoute): JsonObject {
    const [first] = route.destinations;
    const action: JsonObject = { timeout: first?.timeout?.http?.requestTimeout ?? '0s' };
    if (route.destinations.length === 1) action.cluster = first?.name ?? '';
    else action.weightedClusters = { clusters: route.destinations.map(({ name, weight }) => ({ name, weight })) };
    if (route.destinations.some((destination) => destination.external)) action.autoHostRewrite = true;
    const modify = route.modify;
    if (modify?.path?.rewritePrefix !== undefined) action.prefixRewrite = modify.path.rewritePrefix;
    else if (modify?.path?.regex) action.regexRewrite = regexRewrite(modify.path.regex);
    if (modify?.host?.value !== undefined) {
      delete action.autoHostRewrite;
      action.hostRewriteLiteral = modify.host.value;
    } else if (modify?.host?.fromPath) {
      delete action.autoHostRewrite;
      action.hostRewritePathRegex = regexRewrite(modify.host.fromPath);
    }
    const envoyRoute: JsonObject = { match: routeMatch(route.match), route: action };
    const limit = route.rateLimit && routeRateLimit(route.rateLimit);
    if (limit) envoyRoute.typedPerFilterConfig = { [FILTER.localRateLimit]: limit };
    const headers = (list: HeaderList | undefined): JsonObject[] =>
      (list ?? []).map((header) => ({ header: { key: header.name ?? '', value: header.value ?? '' }, append: header.append ?? false }));
    if (modify?.requestHeaders?.add) envoyRoute.requestHeadersToAdd = headers(modify.requestHeaders.add);
    if (modify?.requestHeaders?.remove) envoyRoute.requestHeadersToRemove = modify.requestHeaders.remove.map((header) => header.name ?? '');
    if (modify?.responseHeaders?.add) envoyRoute.responseHeadersToAdd = headers(modify.responseHeaders.add);
    if (modify?.responseHeaders?.remove) envoyRoute.responseHeadersToRemove = modify.responseHeaders.remove.map((header) => header.name ?? '');
    return envoyRoute;
  }

  /**
   * A destination's cluster, shared between the proxies reaching it through the same policies;
   * an external service reached directly has endpoints of the proxy's own (its permissions).
   */
  private sharedCluster(destination: Destination, external: boolean, protocol: Protocol): Cluster {
    if (!this.state.shareResources || (external && !this.state.context.zoneEgressEnabled)) return this.cluster(destination, external, protocol);
    const policies = this.servicePolicies.get(destination.service);
    const key = [
      'cluster',
      destination.name,
      destination.service,
      JSON.stringify(destination.tags),
      destination.otherMesh ?? '',
      external,
      protocol,
      objectId(destination.timeout),
      objectId(destination.loadBalancer),
      objectId(policies?.circuitBreaker),
      objectId(policies?.healthCheck),
    ].join('\u0000');
    return this.state.context.shared(key, () => this.cluster(destination, external, protocol));
  }

  private cluster(destination: Destination, external: boolean, protocol: Protocol): Cluster {
    const policies = this.servicePolicies.get(destination.service);
    const cluster = renderServiceCluster(this.state, destination, external, protocol);
    configureClusterTimeouts(cluster, destination.timeout, protocol);
    configureCircuitBreakers(cluster, policies?.circuitBreaker?.spec.conf);
    configureOutlierDetection(cluster, policies?.circuitBreaker?.spec.conf);
    configureHealthCheck(cluster, policies?.healthCheck?.spec.conf, protocol);
    if (!external) configureLoadBalancer(cluster, destination.loadBalancer);
    return cluster;
  }
}

const NO_EXTERNAL_TLS = { enabled: false, allowRenegotiation: false, skipHostnameVerification: false, serverName: '' };

type HeaderList = NonNullable<NonNullable<NonNullable<HttpRoute['modify']>['requestHeaders']>['add']>;
type StringMatcher = NonNullable<NonNullable<HttpRoute['match']>['path']>;

const googleRe2 = (regex: string): JsonObject => ({ googleRe2: {}, regex });
const regexRewrite = (replace: { pattern?: string | undefined; substitution?: string | undefined }): JsonObject => ({
  pattern: googleRe2(replace.pattern ?? ''),
  substitution: replace.substitution ?? '',
});

function headerMatcher(name: string, matcher: StringMatcher): JsonObject {
  if (matcher.prefix !== undefined) return { name, prefixMatch: matcher.prefix };
  if (matcher.exact !== undefined) return { name, stringMatch: { exact: matcher.exact } };
  if (matcher.regex !== undefined) return { name, safeRegexMatch: googleRe2(matcher.regex) };
  return { name };
}

/** A TrafficRoute match; every route needs a path match, so `/` stands in when there is none. */
function routeMatch(match: HttpRoute['match']): JsonObject {
  const path = match?.path;
  const result: JsonObject =
    path?.prefix !== undefined
      ? { prefix: path.prefix }
      : path?.exact !== undefined
        ? { path: path.exact }
        : path?.regex !== undefined
          ? { safeRegex: googleRe2(path.regex) }
          : { prefix: '/' };
  const headers = Object.keys(match?.headers ?? {})
    .sort()
    .map((name) => headerMatcher(name, match?.headers?.[name] ?? {}));
  if (match?.method) headers.push(headerMatcher(':method', match.method));
  if (headers.length > 0) result.headers = headers;
  return result;
}

export type RenderedOutbounds = ReturnType<OutboundRenderer['render']>;

/**
 * Renders the outbound side of a proxy. Proxies matched alike (`classKey`) with outbounds at the
 * same addresses render it alike, unless a traffic log names their own address and log socket:
 * they share one rendering per mesh state, read-only (docs/xds.md, Pushing changes).
 */
export function renderOutbounds(state: ProxyState, options: OutboundOptions = {}): RenderedOutbounds {
  const render = () => new OutboundRenderer(state, options).render();
  if (!state.shareResources) return render();
  const { policies } = state;
  const logged = policies.services.some((service) => service.trafficLog !== undefined);
  const key = [
    'outbounds',
    policies.classKey,
    policies.outbounds.map((outbound) => outbound.name).join(','),
    Boolean(options.skipHttp),
    state.transparentProxying,
    state.ipv6,
    logged ? state.address : '',
    logged ? state.accessLogSocketPath : '',
  ].join('\u0000');
  return state.context.shared(key, render);
}
