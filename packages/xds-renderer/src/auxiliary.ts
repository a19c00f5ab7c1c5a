// The resources around the inbounds and outbounds (docs/xds.md, What a proxy receives): the admin API cluster and listener,
// the prometheus listener, the tracing collector cluster, transparent proxying's
// pass-through listeners and its DNS listener.
import { PASS_THROUGH_SERVICE } from '@mesh/policy-matcher';
import { configureUpstreamBind, newCluster, passThroughCluster, staticCluster } from './clusters.js';
import { type Cluster, FILTER, type JsonObject, type Listener, sanitizeMetric, scalarText, socketAddress, TYPE, typedExtension } from './envoy.js';
import { accessLog, httpConnectionManagerFilter, tcpProxy } from './filters.js';
import { tlsInspector } from './inbound.js';
import { splitHostPort } from './mesh-context.js';
import { ADMIN_NAME, DNS_LISTENER_NAME, METRICS_HIJACKER_NAME, passThroughNames, PROMETHEUS_LISTENER_NAME, tracingClusterName } from './names.js';
import { ownResource, type ProxyState } from './proxy-state.js';
import { ORIGIN, type ResourceSet } from './resource-set.js';
import { adminStaticMtls, downstreamMeshTls, tlsTransportSocket, upstreamExternalTls } from './tls.js';

const ALLOWED_ADMIN_ADDRESSES = ['', '0.0.0.0', '127.0.0.1', '::', '::1'];

/** A listener on an address of the proxy that is not tied to an inbound. */
function inboundStyleListener(name: string, address: string, port: number, filterChains: JsonObject[]): Listener {
  return { '@type': TYPE.listener, name, address: socketAddress(address, port), enableReusePort: false, trafficDirection: 'INBOUND', filterChains };
}

interface StaticPath {
  readonly path: string;
  readonly rewrite: string;
  readonly cluster: string;
}

/** An HTTP connection manager serving a few fixed paths from one cluster. */
function staticEndpoints(virtualHost: string, paths: readonly StaticPath[]): JsonObject {
  const routes = paths.map(({ path, rewrite, cluster }) => ({ match: { prefix: path }, route: { cluster, prefixRewrite: rewrite } }));
  return httpConnectionManagerFilter({
    '@type': TYPE.httpConnectionManager,
    statPrefix: sanitizeMetric(virtualHost),
    httpFilters: [],
    routeConfig: { validateClusters: false, virtualHosts: [{ name: virtualHost, domains: ['*'], routes }] },
  });
}

/** The cluster zone proxies reach their admin API with. */
export const renderAdminCluster = (port: number): Cluster => staticCluster(ADMIN_NAME, '127.0.0.1', port);

/**
 * Envoy's admin API: a cluster to reach it on loopback and, on the proxy's own address, a
 * listener exposing `/ready` in plain text and everything over mTLS to the control plane.
 */
function renderAdmin(state: ProxyState, output: ResourceSet): void {
  const requested = state.metadata.adminAddress ?? '';
  if (!ALLOWED_ADMIN_ADDRESSES.includes(requested)) {
    throw new Error(`envoy admin cluster is not allowed to have addresses other than ${ALLOWED_ADMIN_ADDRESSES.map((a) => `"${a}"`).join(', ')}`);
  }
  const adminAddress = requested === '::' ? '::1' : requested === '' || requested === '0.0.0.0' ? '127.0.0.1' : requested;
  const cluster = (): Cluster => staticCluster(ADMIN_NAME, adminAddress, state.adminPort, adminAddress.includes(':'));
  output.addCluster(ORIGIN.admin, state.shareResources ? state.context.shared(`admin-cluster\u0000${adminAddress}\u0000${state.adminPort}`, cluster) : cluster());
  const ownAddress = state.spec.networking?.address ?? '';
  // The admin API already listens on its loopback address and port.
  if (ownAddress === adminAddress) return;
  const adminTls = state.metadata.adminTls;
  const build = (): Listener => {
    const chains: JsonObject[] = [{ filters: [staticEndpoints(ADMIN_NAME, [{ path: '/ready', rewrite: '/ready', cluster: ADMIN_NAME }])] }];
    if (adminTls) {
      chains.push({
        filterChainMatch: { transportProtocol: 'tls' },
        filters: [staticEndpoints(ADMIN_NAME, [{ path: '/', rewrite: '/', cluster: ADMIN_NAME }])],
        transportSocket: tlsTransportSocket(adminStaticMtls(adminTls.server, adminTls.caPem)),
      });
    }
    const listener = inboundStyleListener(ADMIN_NAME, ownAddress, state.adminPort, chains);
    listener.listenerFilters = [tlsInspector()];
    return listener;
  };
  const inputs = [ownAddress, state.adminPort, adminTls?.server.certificatePem ?? '', adminTls?.server.privateKeyPem ?? '', adminTls?.caPem ?? ''];
  output.addListener(ORIGIN.admin, ownResource(state, 'admin', inputs, build));
}

interface PrometheusConf {
  port?: number;
  path?: string;
  skipMTLS?: boolean;
  tls?: { mode?: string };
  envoy?: { filterRegex?: string; usedOnly?: boolean };
}

/** The mesh's enabled prometheus backend, with the dataplane's own `metrics` over it. */
function prometheusConf(state: ProxyState): PrometheusConf | undefined {
  const metrics = state.context.spec.metrics;
  const backend = metrics?.backends?.find((candidate) => (candidate.name ?? '') === (metrics.enabledBackend ?? ''));
  if (!metrics?.enabledBackend || backend?.type !== 'prometheus') return undefined;
  const own = state.spec.metrics?.type === 'prometheus' ? (state.spec.metrics.conf ?? {}) : {};
  return { ...(backend.conf ?? {}), ...own };
}

const UNSPECIFIED = ['0.0.0.0', '::'];
const overlaps = (a: string, b: string): boolean => UNSPECIFIED.includes(a) || UNSPECIFIED.includes(b) || a === b;

/** Whether an inbound or outbound of the dataplane already uses the address and port. */
function usesInterface(state: ProxyState, address: string, port: number): boolean {
  const networking = state.spec.networking;
  const inbounds = state.policies.inbounds.slice(0, networking?.inbound?.length ?? 0);
  const inboundClash = inbounds.some(({ interface: iface }) =>
    (port === iface.dataplanePort && overlaps(address, iface.dataplaneIp)) || (port === iface.workloadPort && overlaps(address, iface.workloadIp)));
  const outboundClash = (networking?.outbound ?? []).some((outbound) => port === outbound.port && overlaps(address, outbound.address || '127.0.0.1'));
  return inboundClash || outboundClash;
}

/** `/metrics` on the proxy's address, served from the agent's merged metrics (unless a port clashes). */
function renderPrometheus(state: ProxyState, output: ResourceSet): void {
  const conf = prometheusConf(state);
  const address = state.spec.networking?.address ?? '';
  const port = conf?.port || 5670;
  if (!conf || usesInterface(state, address, port)) return;
  const { dataplane } = state;
  const hijacker = newCluster(METRICS_HIJACKER_NAME);
  hijacker.type = 'STATIC';
  const socketPath = state.metadata.metricsSocketPath ?? `/tmp/mesh-mh-${dataplane.name}-${dataplane.mesh}.sock`;
  hijacker.loadAssignment = { clusterName: METRICS_HIJACKER_NAME, endpoints: [{ lbEndpoints: [{ endpoint: { address: { pipe: { path: socketPath } } } }] }] };
  hijacker.altStatName = sanitizeMetric(METRICS_HIJACKER_NAME);
  hijacker.connectTimeout = '10s';
  output.addCluster(ORIGIN.prometheus, hijacker);

  const query = [conf.envoy?.filterRegex ? `filter=${conf.envoy.filterRegex}` : '', conf.envoy?.usedOnly ? 'usedonly' : ''].filter(Boolean).join('&');
  const path = { path: conf.path || '/metrics', rewrite: `/${query ? `?${query}` : ''}`, cluster: METRICS_HIJACKER_NAME };
  const endpoints = (): JsonObject[] => [staticEndpoints(PROMETHEUS_LISTENER_NAME, [path])];
  const mtls = state.context.mtls;
  const mode = conf.tls?.mode ?? (conf.tls ? 'activeMTLSBackend' : undefined);
  let chains: JsonObject[];
  if (mtls && (mode === 'activeMTLSBackend' || (mode === undefined && !conf.skipMTLS))) {
    // The proxy scraping itself (a prometheus next to it) needs no certificate.
    chains = [
      { filterChainMatch: { sourcePrefixRanges: [{ addressPrefix: address, prefixLen: 32 }] }, filters: endpoints() },
      { filters: endpoints(), transportSocket: tlsTransportSocket(downstreamMeshTls(state.context.name)) },
    ];
  } else if (mode === 'providedTLS' && state.metadata.metricsCertPath && state.metadata.metricsKeyPath) {
    const certificate = { certificateChain: { filename: state.metadata.metricsCertPath }, privateKey: { filename: state.metadata.metricsKeyPath } };
    chains = [{ filters: endpoints(), transportSocket: tlsTransportSocket({ '@type': TYPE.downstreamTlsContext, commonTlsContext: { tlsCertificates: [certificate] } }) }];
  } else {
    chains = [{ filters: endpoints() }];
  }
  output.addListener(ORIGIN.prometheus, inboundStyleListener(PROMETHEUS_LISTENER_NAME, address, port, chains));
}

/** The collector of the TrafficTrace's backend (TLS for an https zipkin URL). */
function renderTracingCluster(state: ProxyState, output: ResourceSet): void {
  const backend = state.tracingBackend;
  if (!backend) return;
  const conf = backend.conf ?? {};
  let target: { host: string; port: number; tls: boolean } | undefined;
  if (backend.type === 'zipkin') {
    try {
      const url = new URL(scalarText(conf.url));
      const port = Number(url.port);
      if (url.port !== '' && Number.isInteger(port)) target = { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port, tls: url.protocol === 'https:' };
    } catch {
      target = undefined;
    }
  } else if (backend.type === 'datadog') {
    target = { host: scalarText(conf.address), port: Number(conf.port ?? 0), tls: false };
  }
  if (!target) return;
  const cluster = staticCluster(tracingClusterName(backend.name), target.host, target.port, state.ipv6);
  if (target.tls) {
    const tls = { enabled: true, allowRenegotiation: true, skipHostnameVerification: false, serverName: '' };
    cluster.transportSocketMatches = [{ name: target.host, match: {}, transportSocket: tlsTransportSocket(upstreamExternalTls(target.host, tls)) }];
  }
  output.addCluster(ORIGIN.tracing, cluster);
}

/** Transparent proxying: whatever matches no outbound or inbound goes to its original destination. */
function renderTransparentProxy(state: ProxyState, output: ResourceSet): void {
  const redirect = state.spec.networking?.transparentProxying;
  if (!redirect?.redirectPortOutbound) return;
  const families: Array<[(typeof passThroughNames)[keyof typeof passThroughNames], number]> = [[passThroughNames.ipv4, redirect.redirectPortInbound ?? 0]];
  if (redirect.redirectPortInboundV6) families.push([passThroughNames.ipv6, redirect.redirectPortInboundV6]);
  const passThroughLog = state.policies.services.find((entry) => entry.service === PASS_THROUGH_SERVICE)?.trafficLog;
  const logBackend = passThroughLog && state.context.loggingBackend(passThroughLog.spec.conf?.backend);
  for (const [names, inboundPort] of families) {
    if (state.context.passthrough) output.addCluster(ORIGIN.transparent, passThroughCluster(names.outbound));
    const outboundProxy = tcpProxy(names.outbound, [{ name: names.outbound, weight: 0 }]);
    const log =
      logBackend &&
      accessLog(
        logBackend,
        {
          mesh: state.context.name,
          direction: 'UNSPECIFIED',
          sourceService: state.identifyingService,
          destinationService: 'external',
          sourceAddress: state.address,
          accessLogSocketPath: state.accessLogSocketPath,
        },
        'network',
      );
    if (log) outboundProxy.accessLog = [log];
    output.addListener(ORIGIN.transparent, {
      '@type': TYPE.listener,
      name: names.outbound,
      address: socketAddress(names.any, redirect.redirectPortOutbound),
      trafficDirection: 'OUTBOUND',
      filterChains: [{ filters: [typedExtension(FILTER.tcpProxy, outboundProxy)] }],
      useOriginalDst: true,
    });
    const inboundCluster = passThroughCluster(names.inbound);
    configureUpstreamBind(inboundCluster, names.inboundSource);
    output.addCluster(ORIGIN.transparent, inboundCluster);
    const inboundProxy = tcpProxy(names.inbound, [{ name: names.inbound, weight: 0 }]);
    const listener = inboundStyleListener(names.inbound, names.any, inboundPort, [{ filters: [typedExtension(FILTER.tcpProxy, inboundProxy)] }]);
    listener.useOriginalDst = true;
    output.addListener(ORIGIN.transparent, listener);
  }
}

/** How long resolvers may keep an answer naming a virtual IP. */
const DNS_ANSWER_TTL = '30s';

/**
 * Transparent proxying with DNS enabled by the agent (`dataplane.dns.port`): a UDP listener on
 * loopback whose DNS filter answers the names of the virtual IPs the proxy has outbounds at
 * (IPv4-mapped IPv6 too when it redirects IPv6) and resolves every other name through the
 * system's resolvers (docs/xds.md, Service names and virtual IPs).
 */
function renderDns(state: ProxyState, output: ResourceSet): void {
  const port = state.metadata.dnsPort;
  const redirect = state.spec.networking?.transparentProxying;
  if (!port || !redirect) return;
  const outboundAddresses = new Set(state.policies.outbounds.map((outbound) => splitHostPort(outbound.name)?.host));
  const addressesByDomain = new Map<string, string[]>();
  for (const { address, domains } of state.context.state.vipDomains ?? []) {
    if (!outboundAddresses.has(address)) continue;
    const addresses = redirect.redirectPortInboundV6 ? [address, `::ffff:${address}`] : [address];
    for (const domain of domains) addressesByDomain.set(domain, addresses);
  }
  const virtualDomains = [...addressesByDomain.keys()]
    .sort()
    .map((name) => ({ name, endpoint: { addressList: { address: addressesByDomain.get(name) ?? [] } }, answerTtl: DNS_ANSWER_TTL }));
  const filter = typedExtension(FILTER.dnsFilter, {
    '@type': TYPE.dnsFilter,
    statPrefix: 'mesh_dns',
    serverConfig: { inlineDnsTable: { virtualDomains } },
    // Without a resolver of its own the filter asks the system's (resolv.conf, the hosts file).
    clientConfig: { maxPendingLookups: 256 },
  });
  output.addListener(ORIGIN.dns, {
    '@type': TYPE.listener,
    name: DNS_LISTENER_NAME,
    address: { socketAddress: { protocol: 'UDP', address: '127.0.0.1', portValue: port } },
    trafficDirection: 'INBOUND',
    listenerFilters: [filter],
  });
}

/** Adds the admin, prometheus, transparent proxying, DNS and tracing resources to the proxy's set. */
export function renderAuxiliary(state: ProxyState, output: ResourceSet): void {
  renderAdmin(state, output);
  renderPrometheus(state, output);
  renderTransparentProxy(state, output);
  renderDns(state, output);
  renderTracingCluster(state, output);
}
