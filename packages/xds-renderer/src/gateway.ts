// Builtin gateways (docs/xds.md, Builtin gateways): the listeners of the proxy's MeshGateway, one
// per port. HTTP and HTTPS listeners route by virtual host (one per hostname, each with the route
// table of the MeshGatewayRoutes serving it) through a route configuration sent over RDS; TCP and
// TLS listeners proxy to their routes' backends by weight. Every route destination gets a cluster
// with the connection policies matched for it (Timeout, CircuitBreaker, HealthCheck, Retry,
// RateLimit) and its endpoints; the gateway's TrafficLog and TrafficTrace apply to every listener.
import { PROTOCOL_TAG, SERVICE_TAG } from '@mesh/model';
import type { GatewayDestination, GatewayHost, GatewayListener, GatewayMatch, GatewayRouteEntry, HeaderChanges, NameValue } from '@mesh/policy-matcher';
import {
  configureCircuitBreakers,
  configureClusterTimeouts,
  configureEds,
  configureHealthCheck,
  configureOutlierDetection,
  configureUpstreamHttpFor,
  newCluster,
} from './clusters.js';
import { type Cluster, FILTER, type JsonObject, type Listener, socketAddress, TYPE, type TypedObject, typedExtension } from './envoy.js';
import { accessLog, fractionalPercent, localRateLimitFilter, retryPolicy, routeRateLimit, tcpProxy, tracing, type WeightedCluster } from './filters.js';
import { tlsInspector } from './inbound.js';
import { destinationClusterName, gatewayListenerName, TAGS_HEADER } from './names.js';
import { configureMeshTls, renderServiceCluster, serviceLoadAssignment } from './outbound.js';
import { parseProtocol, type Protocol } from './protocol.js';
import { isExternalService, type ProxyState } from './proxy-state.js';
import { ORIGIN, type ResourceSet } from './resource-set.js';
import { tlsTransportSocket } from './tls.js';

/** A route destination whose backend could not be resolved: no cluster, so Envoy answers 500. */
export const UNRESOLVED_BACKEND_SERVICE = 'mesh.io/unresolved-backend';

const EMPTY_GATEWAY_MESSAGE = 'This is a MeshGateway. No routes match this MeshGateway!\n';
const CONNECTION_BUFFER_LIMIT = 32_768;
const STREAM_IDLE_TIMEOUT = '5s';

/** The protocol a destination is spoken in: its protocol tag, else the kind of its route. */
const destinationProtocol = (destination: GatewayDestination): Protocol => parseProtocol(destination.tags[PROTOCOL_TAG] ?? destination.protocol ?? 'http');

// --- Clusters ------------------------------------------------------------------------------

/** The cluster of a route destination: named after its tags and the host's, so hosts with other policies get their own. */
const clusterNameOf = (destination: GatewayDestination, host: GatewayHost): string => destinationClusterName(destination.tags, host.tags);

function destinationCluster(state: ProxyState, destination: GatewayDestination, name: string): Cluster {
  const service = destination.tags[SERVICE_TAG] ?? '';
  const protocol = destinationProtocol(destination);
  const target = { name, service, tags: destination.tags, otherMesh: undefined };
  let cluster: Cluster;
  if (isExternalService(state, service)) cluster = renderServiceCluster(state, target, true, protocol);
  else {
    cluster = newCluster(name);
    configureEds(cluster);
    configureMeshTls(state, cluster, target, service);
    configureUpstreamHttpFor(cluster, protocol);
  }
  const { Timeout: timeout, CircuitBreaker: circuitBreaker, HealthCheck: healthCheck } = destination.policies;
  configureClusterTimeouts(cluster, timeout?.spec.conf, protocol);
  configureCircuitBreakers(cluster, circuitBreaker?.spec.conf);
  configureOutlierDetection(cluster, circuitBreaker?.spec.conf);
  configureHealthCheck(cluster, healthCheck?.spec.conf, protocol);
  cluster.perConnectionBufferLimitBytes = CONNECTION_BUFFER_LIMIT;
  return cluster;
}

/** Adds the destination's cluster (and endpoints) once; its name, or undefined for an unresolved backend. */
function addDestination(state: ProxyState, resources: ResourceSet, destination: GatewayDestination, host: GatewayHost): string | undefined {
  const service = destination.tags[SERVICE_TAG] ?? '';
  if (service === UNRESOLVED_BACKEND_SERVICE) return undefined;
  const name = clusterNameOf(destination, host);
  if (resources.clusters.get(name)) return name;
  const cluster = destinationCluster(state, destination, name);
  resources.addCluster(ORIGIN.gateway, cluster);
  if (cluster.type === 'EDS') resources.addEndpoints(ORIGIN.gateway, serviceLoadAssignment(state, { name, service, tags: destination.tags, otherMesh: undefined }));
  return name;
}

// --- Routes --------------------------------------------------------------------------------

const headerValues = (headers: readonly NameValue[], append: boolean): JsonObject[] =>
  headers.map((header) => ({ header: { key: header.name, value: header.value }, appendAction: append ? 'APPEND_IF_EXISTS_OR_ADD' : 'OVERWRITE_IF_EXISTS_OR_ADD' }));

function routeMatch(entry: GatewayRouteEntry): JsonObject {
  const { match } = entry;
  const result: JsonObject = {};
  if (match.exactPath !== undefined) result.path = match.exactPath;
  else if (match.regexPath !== undefined) result.safeRegex = { regex: match.regexPath };
  else result.prefix = match.prefixPath ?? '/';
  const headers: JsonObject[] = [];
  if (match.method !== undefined) headers.push({ name: ':method', stringMatch: { exact: match.method } });
  for (const header of match.exactHeaders) headers.push({ name: header.name, stringMatch: { exact: header.value } });
  for (const header of match.regexHeaders) headers.push({ name: header.name, stringMatch: { safeRegex: { regex: header.value } } });
  for (const name of match.presentHeaders) headers.push({ name, presentMatch: true });
  for (const name of match.absentHeaders) headers.push({ name, presentMatch: true, invertMatch: true });
  if (headers.length > 0) result.headers = headers;
  const query = [
    ...match.exactQuery.map((param) => ({ name: param.name, stringMatch: { exact: param.value } })),
    ...match.regexQuery.map((param) => ({ name: param.name, stringMatch: { safeRegex: { regex: param.value } } })),
  ];
  if (query.length > 0) result.queryParameters = query;
  return result;
}

const REDIRECT_CODES: Readonly<Record<number, string>> = { 301: 'MOVED_PERMANENTLY', 302: 'FOUND', 303: 'SEE_OTHER', 307: 'TEMPORARY_REDIRECT', 308: 'PERMANENT_REDIRECT' };

function redirectAction(entry: GatewayRouteEntry, listenerPort: number): JsonObject {
  const redirect = entry.redirect ?? { status: 302 };
  const action: JsonObject = {};
  if (redirect.scheme) action.schemeRedirect = redirect.scheme;
  if (redirect.host) action.hostRedirect = redirect.host;
  action.portRedirect = redirect.port && redirect.port > 0 ? redirect.port : listenerPort;
  if (redirect.pathRewrite?.replaceFullPath !== undefined) action.regexRewrite = { pattern: { regex: '.*' }, substitution: redirect.pathRewrite.replaceFullPath };
  if (redirect.pathRewrite?.replacePrefixMatch !== undefined) action.prefixRewrite = redirect.pathRewrite.replacePrefixMatch;
  const code = REDIRECT_CODES[redirect.status];
  if (code && code !== 'MOVED_PERMANENTLY') action.responseCode = code;
  return action;
}

function applyHeaderChanges(route: JsonObject, changes: HeaderChanges | undefined, direction: 'request' | 'response'): void {
  if (!changes) return;
  const add: JsonObject[] = [];
  for (const header of changes.replace) {
    if (direction === 'request' && [':authority', 'host', 'Host'].includes(header.name)) {
      const action = route.route as JsonObject | undefined;
      if (action) action.hostRewriteLiteral = header.value;
    } else add.push(...headerValues([header], false));
  }
  add.push(...headerValues(changes.append, true));
  if (add.length > 0) route[`${direction}HeadersToAdd`] = add;
  if (changes.remove.length > 0) route[`${direction}HeadersToRemove`] = [...changes.remove];
}

/** One route of a virtual host: forward by weight (or redirect), with the destination's policies. */
function gatewayRoute(state: ProxyState, resources: ResourceSet, listener: GatewayListener, host: GatewayHost, entry: GatewayRouteEntry): JsonObject {
  const route: JsonObject = { match: routeMatch(entry) };
  if (entry.redirect) {
    route.redirect = redirectAction(entry, listener.port);
    return route;
  }
  const tagsHeader = state.tagsHeader;
  const byName = new Map<string, { weight: number; service: string }>();
  for (const destination of entry.forwards) {
    const name = addDestination(state, resources, destination, host) ?? UNRESOLVED_BACKEND_SERVICE;
    byName.set(name, { weight: destination.weight === 0 && entry.forwards.length === 1 ? 1 : destination.weight, service: destination.tags[SERVICE_TAG] ?? '' });
  }
  const clusters = [...byName.keys()].sort().map((name): JsonObject => {
    const { weight, service } = byName.get(name) ?? { weight: 0, service: '' };
    const weighted: JsonObject = { name, weight };
    // Mesh services read the caller's tags; an external service reached directly is not told them.
    const meshCluster = state.context.zoneEgressEnabled || !isExternalService(state, service);
    if (tagsHeader && meshCluster) weighted.requestHeadersToAdd = [{ header: { key: TAGS_HEADER, value: tagsHeader } }];
    return weighted;
  });
  const action: JsonObject = { clusterNotFoundResponseCode: 'INTERNAL_SERVER_ERROR', weightedClusters: { clusters }, idleTimeout: STREAM_IDLE_TIMEOUT };
  route.route = action;
  // The connection policies of the first destination speak for the route.
  const first = entry.forwards[0];
  const protocol = first ? destinationProtocol(first) : 'http';
  const retry = retryPolicy(first?.policies.Retry, protocol);
  if (retry) action.retryPolicy = retry;
  const requestTimeout = first?.policies.Timeout?.spec.conf?.http?.requestTimeout;
  if (requestTimeout !== undefined) action.timeout = requestTimeout;
  const rateLimit = first?.policies.RateLimit && routeRateLimit(first.policies.RateLimit.spec);
  if (rateLimit) route.typedPerFilterConfig = { [FILTER.localRateLimit]: rateLimit };
  applyHeaderChanges(route, entry.requestHeaders, 'request');
  applyHeaderChanges(route, entry.responseHeaders, 'response');
  if (entry.mirror && entry.mirror.percentage > 0) {
    const mirrored = addDestination(state, resources, entry.mirror.destination, host);
    if (mirrored) action.requestMirrorPolicies = [{ cluster: mirrored, runtimeFraction: { defaultValue: fractionalPercent(entry.mirror.percentage) } }];
  }
  if (entry.rewrite?.replaceFullPath !== undefined) action.regexRewrite = { pattern: { regex: '.*' }, substitution: entry.rewrite.replaceFullPath };
  if (entry.rewrite?.replacePrefixMatch !== undefined) action.prefixRewrite = entry.rewrite.replacePrefixMatch;
  if (entry.rewrite?.hostToBackendHostname) action.autoHostRewrite = true;
  return route;
}

function virtualHost(state: ProxyState, resources: ResourceSet, listener: GatewayListener, host: GatewayHost): JsonObject {
  const result: JsonObject = { name: host.hostname, domains: [host.hostname] };
  if (listener.protocol === 'HTTPS' || listener.crossMesh) {
    result.requireTls = 'ALL';
    result.responseHeadersToAdd = [{ header: { key: 'Strict-Transport-Security', value: 'max-age=31536000; includeSubDomains' }, appendAction: 'OVERWRITE_IF_EXISTS_OR_ADD' }];
  }
  result.routes =
    host.entries.length === 0
      ? [{ match: { prefix: '/' }, directResponse: { status: 404, body: { inlineString: EMPTY_GATEWAY_MESSAGE } } }]
      : host.entries.map((entry) => gatewayRoute(state, resources, listener, host, entry));
  return result;
}

// --- Listeners -----------------------------------------------------------------------------

/** The gateway's TrafficLog (the one for `pass_through`): its traffic as the gateway service's to any destination. */
function gatewayAccessLog(state: ProxyState, match: GatewayMatch, kind: 'http' | 'network'): JsonObject[] {
  const backend = match.trafficLog && state.context.loggingBackend(match.trafficLog.spec.conf?.backend);
  const subject = { mesh: state.context.name, direction: 'INBOUND', sourceService: state.identifyingService, destinationService: '*', sourceAddress: state.address, accessLogSocketPath: state.accessLogSocketPath } as const;
  const log = backend && accessLog(backend, subject, kind);
  return log ? [log] : [];
}

function httpConnectionManager(state: ProxyState, match: GatewayMatch, name: string): JsonObject {
  const trace = state.tracingBackend && tracing(state.tracingBackend, { service: state.identifyingService, direction: 'UNSPECIFIED', destination: '' });
  const logs = gatewayAccessLog(state, match, 'http');
  return typedExtension(FILTER.httpConnectionManager, {
    ...(trace ? { tracing: trace } : {}),
    ...(logs.length > 0 ? { accessLog: logs } : {}),
    '@type': TYPE.httpConnectionManager,
    statPrefix: state.identifyingService.replace(/[^a-zA-Z_\-0-9]/g, '_'),
    rds: { configSource: { ads: {}, resourceApiVersion: 'V3' }, routeConfigName: name },
    httpFilters: [
      localRateLimitFilter(),
      typedExtension('gzip-compress', {
        '@type': TYPE.compressor,
        compressorLibrary: { name: 'gzip', typedConfig: { '@type': TYPE.gzipCompressor } },
        responseDirectionConfig: { disableOnEtagHeader: true },
      }),
      typedExtension(FILTER.router, { '@type': TYPE.router, startChildSpan: true }),
    ],
    commonHttpProtocolOptions: { headersWithUnderscoresAction: 'REJECT_REQUEST', idleTimeout: '300s' },
    http2ProtocolOptions: { allowConnect: true, initialConnectionWindowSize: 1_048_576, initialStreamWindowSize: 65_536, maxConcurrentStreams: 100 },
    mergeSlashes: true,
    normalizePath: true,
    pathWithEscapedSlashesAction: 'UNESCAPE_AND_REDIRECT',
    requestHeadersTimeout: '0.500s',
    serverName: 'Mesh Gateway',
    streamIdleTimeout: STREAM_IDLE_TIMEOUT,
    useRemoteAddress: true,
  });
}

/** The certificate of an HTTPS host, from the mesh secret its listener names (a PEM chain and key in one secret). */
function downstreamTls(state: ProxyState, host: GatewayHost): JsonObject | undefined {
  const secretName = host.tls?.certificates?.[0]?.secret;
  const pem = secretName !== undefined ? state.context.state.secrets?.get(secretName) : undefined;
  if (pem === undefined) return undefined;
  const text = Buffer.from(pem, 'base64').toString('utf8');
  const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----\n?/.exec(text)?.[0];
  if (key === undefined) return undefined;
  const chain = text.replace(key, '');
  return tlsTransportSocket({
    '@type': TYPE.downstreamTlsContext,
    commonTlsContext: { tlsCertificates: [{ certificateChain: { inlineString: chain }, privateKey: { inlineString: key } }], alpnProtocols: ['h2', 'http/1.1'] },
  });
}

function gatewayListener(state: ProxyState, resources: ResourceSet, match: GatewayMatch, gateway: string, listener: GatewayListener): Listener | undefined {
  const name = gatewayListenerName(gateway, listener.protocol, listener.port);
  const filterChains: JsonObject[] = [];
  if (listener.protocol === 'HTTP' || listener.protocol === 'HTTPS') {
    const routeConfig: TypedObject = {
      '@type': TYPE.routeConfiguration,
      name,
      ignorePortInHostMatching: true,
      requestHeadersToRemove: [TAGS_HEADER],
      validateClusters: false,
      virtualHosts: listener.hosts.map((host) => virtualHost(state, resources, listener, host)),
    };
    resources.routes.add(ORIGIN.gateway, name, routeConfig);
    if (listener.protocol === 'HTTP') filterChains.push({ filters: [httpConnectionManager(state, match, name)] });
    else {
      for (const host of listener.hosts) {
        const transportSocket = downstreamTls(state, host);
        if (!transportSocket) continue;
        const chain: JsonObject = { filters: [httpConnectionManager(state, match, name)], transportSocket };
        if (host.hostname !== '*') chain.filterChainMatch = { serverNames: [host.hostname], transportProtocol: 'tls' };
        filterChains.push(chain);
      }
    }
  } else if (listener.protocol === 'TCP' || listener.protocol === 'TLS') {
    for (const host of listener.hosts) {
      const weights = host.entries.flatMap((entry) => entry.forwards.flatMap((destination): WeightedCluster[] => {
        const cluster = addDestination(state, resources, destination, host);
        return cluster ? [{ name: cluster, weight: destination.weight }] : [];
      }));
      if (weights.length === 0) continue;
      const proxy = tcpProxy(state.identifyingService, weights.length === 1 ? [{ name: weights[0]?.name ?? '', weight: 0 }] : weights);
      const logs = gatewayAccessLog(state, match, 'network');
      if (logs.length > 0) proxy.accessLog = logs;
      // Retries are the whole chain's: the first destination's Retry speaks for it.
      const maxConnectAttempts = host.entries[0]?.forwards[0]?.policies.Retry?.spec.conf?.tcp?.maxConnectAttempts;
      if (maxConnectAttempts !== undefined) proxy.maxConnectAttempts = maxConnectAttempts;
      const chain: JsonObject = { filters: [typedExtension(FILTER.tcpProxy, proxy)] };
      const transportSocket = listener.protocol === 'TLS' ? downstreamTls(state, host) : undefined;
      if (transportSocket) chain.transportSocket = transportSocket;
      filterChains.push(chain);
    }
  }
  if (filterChains.length === 0) return undefined;
  return {
    '@type': TYPE.listener,
    name,
    address: socketAddress(state.spec.networking?.address ?? '', listener.port),
    enableReusePort: true,
    filterChains,
    listenerFilters: [tlsInspector()],
    perConnectionBufferLimitBytes: CONNECTION_BUFFER_LIMIT,
    trafficDirection: 'INBOUND',
  };
}

/** The gateway's listeners, route configurations, clusters and endpoints. */
export function renderGateway(state: ProxyState, match: GatewayMatch, resources: ResourceSet): void {
  const gateway = match.gateway;
  if (!gateway) return;
  for (const listener of match.listeners) {
    const rendered = gatewayListener(state, resources, match, gateway.name, listener);
    if (rendered) resources.addListener(ORIGIN.gateway, rendered);
  }
}
