// Inbound side (docs/xds.md, What a proxy receives): per inbound interface a listener on the dataplane's address and a local
// cluster to the application, with TrafficPermission, FaultInjection and RateLimit applied.
import { PROTOCOL_TAG, SERVICE_TAG } from '@mesh/model';
import type { InboundMatch } from '@mesh/policy-matcher';
import {
  configureClusterTimeouts,
  configureUpstreamBind,
  configureUpstreamHttpFor,
  DEFAULT_INBOUND_TIMEOUT,
  staticCluster,
} from './clusters.js';
import { type Cluster, FILTER, type JsonObject, type Listener, socketAddress, TYPE, typedExtension } from './envoy.js';
import {
  faultFilter,
  grpcStatsFilter,
  httpConnectionManager,
  httpConnectionManagerFilter,
  kafkaBrokerFilter,
  localRateLimitFilter,
  rateLimitSourcesRegex,
  rbacFilter,
  routeRateLimit,
  tagsHeaderMatcher,
  tcpProxy,
  tracing,
} from './filters.js';
import { objectId } from './mesh-context.js';
import { inboundListenerName, inboundRouteName, localClusterName, MESH_ALPN, passThroughNames, TAGS_HEADER } from './names.js';
import { parseProtocol, type Protocol } from './protocol.js';
import { ownResource, type ProxyState } from './proxy-state.js';
import { downstreamMeshTls, tlsTransportSocket } from './tls.js';

/** Port 49151 marks an inbound without a service behind it. */
const SERVICELESS_PORT = 49151;

const TAGS_METADATA_KEY = 'io.mesh.tags';

export const tlsInspector = (): JsonObject => typedExtension(FILTER.tlsInspector, { '@type': TYPE.tlsInspector });

/** Route config inline in the HCM: stray tag headers from clients are dropped. */
function inboundRoutes(inbound: InboundMatch, service: string, clusterName: string): JsonObject {
  const target = { cluster: clusterName, timeout: DEFAULT_INBOUND_TIMEOUT.http?.requestTimeout };
  const routes: JsonObject[] = [];
  // Most specific sources first: the first matching route's limit applies.
  for (const rateLimit of inbound.rateLimits) {
    const limit = routeRateLimit(rateLimit.spec);
    if (!limit) continue;
    routes.push({
      match: { prefix: '/', headers: [tagsHeaderMatcher(rateLimitSourcesRegex(rateLimit))] },
      route: target,
      typedPerFilterConfig: { [FILTER.localRateLimit]: limit },
    });
  }
  routes.push({ match: { prefix: '/' }, route: target });
  return {
    name: inboundRouteName(service),
    requestHeadersToRemove: [TAGS_HEADER],
    validateClusters: false,
    virtualHosts: [{ name: service, domains: ['*'], routes }],
  };
}

function inboundFilterChain(state: ProxyState, inbound: InboundMatch, protocol: Protocol, clusterName: string, withMeshTls: boolean): JsonObject {
  const service = inbound.tags[SERVICE_TAG] ?? '';
  const timeouts = DEFAULT_INBOUND_TIMEOUT;
  const filters: JsonObject[] = [];
  if (protocol === 'http' || protocol === 'http2' || protocol === 'grpc') {
    const hcm = httpConnectionManager(clusterName, true);
    if (protocol === 'grpc') hcm.httpFilters.push(grpcStatsFilter());
    for (const fault of inbound.faultInjections) hcm.httpFilters.push(faultFilter(fault));
    if (inbound.rateLimits.length > 0) hcm.httpFilters.push(localRateLimitFilter());
    const trace = state.tracingBackend && tracing(state.tracingBackend, { service, direction: 'INBOUND', destination: '' });
    if (trace) hcm.tracing = trace;
    hcm.routeConfig = inboundRoutes(inbound, service, clusterName);
    hcm.commonHttpProtocolOptions = { idleTimeout: timeouts.http?.idleTimeout };
    hcm.streamIdleTimeout = timeouts.http?.streamIdleTimeout;
    filters.push(httpConnectionManagerFilter(hcm));
  } else {
    if (protocol === 'kafka') filters.push(kafkaBrokerFilter(clusterName));
    filters.push(typedExtension(FILTER.tcpProxy, { ...tcpProxy(clusterName, [{ name: clusterName, weight: 0 }]), idleTimeout: timeouts.tcp?.idleTimeout }));
  }
  const chain: JsonObject = { filters };
  const context = state.context;
  if (withMeshTls && context.mtls) {
    chain.transportSocket = tlsTransportSocket(downstreamMeshTls(context.name));
    // Only mesh clients are authorized, by the TrafficPermission's sources.
    const listenerName = inboundListenerName(inbound.interface.dataplaneIp, inbound.interface.dataplanePort);
    filters.unshift(rbacFilter(listenerName, inbound.trafficPermission));
  }
  return chain;
}

/** Everything an inbound listener is made of (see `inboundFilterChain`), the mesh's own settings included. */
function inboundListenerInputs(state: ProxyState, inbound: InboundMatch, protocol: Protocol, clusterName: string): unknown[] {
  const { context } = state;
  return [
    inbound.interface.dataplaneIp,
    inbound.interface.dataplanePort,
    inbound.tags,
    protocol,
    clusterName,
    state.transparentProxying,
    context.name,
    context.mtls?.name ?? '',
    context.mtls?.mode ?? '',
    objectId(inbound.trafficPermission),
    inbound.faultInjections.map(objectId),
    inbound.rateLimits.map(objectId),
    state.tracingBackend ?? null,
  ];
}

interface InboundResources {
  readonly listeners: Listener[];
  readonly clusters: Cluster[];
}

export function renderInbounds(state: ProxyState): InboundResources {
  const listeners: Listener[] = [];
  const clusters: Cluster[] = [];
  const specInbounds = state.spec.networking?.inbound ?? [];
  // Matched inbounds start with the spec's, in order; a metrics inbound may follow (matching only).
  specInbounds.forEach((_, index) => {
    const inbound = state.policies.inbounds[index];
    if (!inbound || inbound.interface.dataplanePort === SERVICELESS_PORT) return;
    const { dataplaneIp, dataplanePort, workloadIp, workloadPort } = inbound.interface;
    const protocol = parseProtocol(inbound.tags[PROTOCOL_TAG]);
    const clusterName = localClusterName(workloadPort);

    const build = (): Cluster => {
      const cluster = staticCluster(clusterName, workloadIp, workloadPort);
      configureClusterTimeouts(cluster, DEFAULT_INBOUND_TIMEOUT, protocol);
      // With transparent proxying, the application sees connections from the pass-through address.
      if (state.transparentProxying) {
        configureUpstreamBind(cluster, workloadIp.includes(':') ? passThroughNames.ipv6.inboundSource : passThroughNames.ipv4.inboundSource);
      }
      configureUpstreamHttpFor(cluster, protocol);
      return cluster;
    };
    // The application's address is the proxy's own: kept from its last render rather than shared.
    clusters.push(ownResource(state, `inbound-cluster:${index}`, [workloadIp, workloadPort, protocol, state.transparentProxying], build));

    const buildListener = (): Listener => {
      const listener: Listener = {
        '@type': TYPE.listener,
        name: inboundListenerName(dataplaneIp, dataplanePort),
        address: socketAddress(dataplaneIp, dataplanePort),
        enableReusePort: false,
        trafficDirection: 'INBOUND',
        metadata: { filterMetadata: { [TAGS_METADATA_KEY]: { ...inbound.tags } } },
      };
      if (state.transparentProxying) listener.bindToPort = false;
      if (state.context.mtls?.mode === 'PERMISSIVE') {
        // Plain clients, clients of the application's own TLS, and mesh mTLS clients (told apart by ALPN).
        listener.listenerFilters = [tlsInspector()];
        listener.filterChains = [
          { ...inboundFilterChain(state, inbound, protocol, clusterName, false), filterChainMatch: { transportProtocol: 'raw_buffer' } },
          { ...inboundFilterChain(state, inbound, protocol, clusterName, false), filterChainMatch: { transportProtocol: 'tls' } },
          {
            ...inboundFilterChain(state, inbound, protocol, clusterName, true),
            filterChainMatch: { transportProtocol: 'tls', applicationProtocols: [MESH_ALPN] },
          },
        ];
      } else {
        listener.filterChains = [inboundFilterChain(state, inbound, protocol, clusterName, true)];
      }
      return listener;
    };
    listeners.push(ownResource(state, `inbound:${index}`, inboundListenerInputs(state, inbound, protocol, clusterName), buildListener));
  });
  return { listeners, clusters };
}
