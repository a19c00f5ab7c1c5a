// The health discovery service (docs/xds.md, Health from the control plane): Envoy opens
// `StreamHealthCheck` on the data plane port, the control plane tells it what to check — each
// inbound's application (its `serviceProbe`, else a TCP connect to where the inbound forwards) and
// Envoy's own readiness — and Envoy reports the results every `dpServer.hds.interval`. A report
// sets the `health.ready` of the dataplane's inbounds: an unready inbound leaves its callers'
// endpoints and shows in the proxy's status and the service statuses.
import { status } from '@grpc/grpc-js';
import { dataplaneKind, formatDurationNanos, type DataplaneSpec } from '@mesh/model';
import type { ResourceManager } from '@mesh/resource-manager';
import type { ResourceReader } from '@mesh/store';
import type { Logger } from './ads-server.js';
import { type Authenticator, credentialOf } from './auth.js';
import { adminHostOf } from './envoy-admin.js';
import { adminPortOf, METADATA, proxyNodeOf, type ProxyNode, StreamRefusal, stringMetadata } from './proxy-node.js';
import type { AdsCall } from './transport.js';

/** `dpServer.hds.*`, durations in milliseconds. */
export interface HdsSettings {
  enabled: boolean;
  /** How often Envoy reports the health it found. */
  intervalMs: number;
  /** How often the checks a proxy is given are computed again (its dataplane may have changed). */
  refreshIntervalMs: number;
  /** What a check uses where the inbound's `serviceProbe` says nothing. */
  checkDefaults: { timeoutMs: number; intervalMs: number; noTrafficIntervalMs: number; healthyThreshold: number; unhealthyThreshold: number };
}

export interface SocketAddress {
  address: string;
  portValue: number;
}

export interface ClusterHealthCheck {
  clusterName: string;
  healthChecks: Array<Record<string, unknown>>;
  localityEndpoints: Array<{ endpoints: Array<{ address: { socketAddress: SocketAddress } }> }>;
}

/** `envoy.service.health.v3.HealthCheckSpecifier` in proto3 JSON. */
export interface HealthCheckSpecifier {
  clusterHealthChecks: ClusterHealthCheck[];
  interval: string;
}

/** A message of the stream as decoded (proto field names): the first names the proxy, the others report. */
export interface HealthStreamMessage {
  health_check_request?: { node?: Record<string, unknown> };
  endpoint_health_response?: {
    cluster_endpoints_health?: Array<{
      cluster_name?: string;
      locality_endpoints_health?: Array<{ endpoints_health?: Array<{ health_status?: string }> }>;
    }>;
  };
}

/** The check of Envoy itself: while it is not ready (starting, draining) none of its inbounds is. */
export const ENVOY_ADMIN_CLUSTER = 'mesh_envoy_admin';

type Inbound = NonNullable<NonNullable<DataplaneSpec['networking']>['inbound']>[number];

/** Where an inbound forwards to: its application, which is what is checked. */
function workloadOf(inbound: Inbound, networkingAddress: string | undefined): SocketAddress {
  return { address: inbound.serviceAddress || inbound.address || networkingAddress || '127.0.0.1', portValue: inbound.servicePort || inbound.port || 0 };
}

/** The cluster of Envoy's checks for an application: one per address and port, shared by inbounds in front of the same one. */
const workloadClusterName = (workload: SocketAddress): string => `inbound_app:${workload.address}:${workload.portValue}`;

const seconds = (ms: number): string => formatDurationNanos(Math.round(ms * 1e6));

const endpointsAt = (socketAddress: SocketAddress): ClusterHealthCheck['localityEndpoints'] => [{ endpoints: [{ address: { socketAddress } }] }];

/**
 * The checks Envoy runs for a dataplane: its readiness on its admin API (when the control plane
 * can tell where that is), and each inbound's application with the inbound's `serviceProbe` (a
 * TCP connect), the settings it leaves out taken from `checkDefaults`; an inbound without a probe
 * gets a TCP connect with `checkDefaults`.
 */
export function healthCheckSpecifier(spec: DataplaneSpec, admin: SocketAddress | undefined, settings: HdsSettings): HealthCheckSpecifier {
  const defaults = settings.checkDefaults;
  const base = {
    timeout: seconds(defaults.timeoutMs),
    interval: seconds(defaults.intervalMs),
    noTrafficInterval: seconds(defaults.noTrafficIntervalMs),
    healthyThreshold: defaults.healthyThreshold,
    unhealthyThreshold: defaults.unhealthyThreshold,
  };
  const clusterHealthChecks: ClusterHealthCheck[] = [];
  if (admin) clusterHealthChecks.push({ clusterName: ENVOY_ADMIN_CLUSTER, healthChecks: [{ ...base, httpHealthCheck: { path: '/ready' } }], localityEndpoints: endpointsAt(admin) });
  const networking = spec.networking;
  const seen = new Set<string>();
  for (const inbound of networking?.inbound ?? []) {
    const workload = workloadOf(inbound, networking?.address);
    const clusterName = workloadClusterName(workload);
    if (workload.portValue === 0 || seen.has(clusterName)) continue;
    seen.add(clusterName);
    const probe = inbound.serviceProbe;
    const check = {
      timeout: probe?.timeout ?? base.timeout,
      interval: probe?.interval ?? base.interval,
      noTrafficInterval: base.noTrafficInterval,
      healthyThreshold: probe?.healthyThreshold ?? base.healthyThreshold,
      unhealthyThreshold: probe?.unhealthyThreshold ?? base.unhealthyThreshold,
      tcpHealthCheck: {},
    };
    clusterHealthChecks.push({ clusterName, healthChecks: [check], localityEndpoints: endpointsAt(workload) });
  }
  return { clusterHealthChecks, interval: seconds(settings.intervalMs) };
}

/** Healthy as the reference reads a report: `HEALTHY`, or `UNKNOWN` (not checked yet; the zero value, absent on the wire). */
const isHealthy = (healthStatus: string | undefined): boolean => healthStatus === undefined || healthStatus === 'HEALTHY' || healthStatus === 'UNKNOWN';

/** Each reported cluster's health: healthy when every endpoint it reports is. */
export function reportedHealth(report: NonNullable<HealthStreamMessage['endpoint_health_response']>): Map<string, boolean> {
  const health = new Map<string, boolean>();
  for (const cluster of report.cluster_endpoints_health ?? []) {
    const endpoints = (cluster.locality_endpoints_health ?? []).flatMap((locality) => locality.endpoints_health ?? []);
    if (!cluster.cluster_name || endpoints.length === 0) continue;
    health.set(cluster.cluster_name, endpoints.every((endpoint) => isHealthy(endpoint.health_status)));
  }
  return health;
}

/**
 * The dataplane with the reported health set on its inbounds, or undefined when no inbound's
 * health changes. An inbound whose application the report leaves out keeps its health; all are
 * unready while Envoy reports itself not ready.
 */
export function withReportedHealth(spec: DataplaneSpec, health: ReadonlyMap<string, boolean>): DataplaneSpec | undefined {
  const networking = spec.networking;
  if (!networking?.inbound) return undefined;
  const envoyReady = health.get(ENVOY_ADMIN_CLUSTER) ?? true;
  let changed = false;
  const inbound = networking.inbound.map((entry) => {
    const appHealthy = health.get(workloadClusterName(workloadOf(entry, networking.address)));
    if (appHealthy === undefined && envoyReady) return entry;
    const ready = envoyReady && appHealthy !== false;
    // Stored, a `ready: false` is left out (a proto3 zero): an inbound with a health block without it is unready.
    if (entry.health !== undefined && (entry.health.ready === true) === ready) return entry;
    changed = true;
    return { ...entry, health: { ready } };
  });
  return changed ? { ...spec, networking: { ...networking, inbound } } : undefined;
}

export interface HdsServerOptions {
  store: ResourceReader;
  manager: ResourceManager;
  authenticator: Authenticator;
  settings: HdsSettings;
  /** `bootstrapServer.params.adminPort`: Envoy's admin port when the node does not say. */
  defaultAdminPort: number;
  logger: Logger;
}

/** How often a stream looks again for a dataplane not registered yet (Envoy opens this stream as early as ADS). */
const REGISTRATION_WAIT_MS = 1000;

/** One proxy's `StreamHealthCheck`. */
class HealthStream {
  private node: ProxyNode | undefined;
  private credential = '';
  private authenticated = false;
  private lastSent = '';
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly server: HdsServer,
    private readonly call: AdsCall<HealthStreamMessage, HealthCheckSpecifier>,
  ) {}

  take(message: HealthStreamMessage): void {
    this.queue = this.queue
      .then(() => this.handle(message))
      .catch((error: unknown) => this.refuse(error));
  }

  private async handle(message: HealthStreamMessage): Promise<void> {
    if (this.closed) return;
    if (message.health_check_request && !this.node) {
      this.node = proxyNodeOf(message.health_check_request.node);
      if (this.node.proxyType !== 'dataplane') throw new StreamRefusal('health checking is served to dataplane proxies only', status.INVALID_ARGUMENT);
      this.credential = credentialOf(this.call.authorization);
      await this.refresh();
      return;
    }
    if (message.endpoint_health_response && this.authenticated) await this.applyReport(reportedHealth(message.endpoint_health_response));
  }

  /** Checks the token against the dataplane as stored, and sends its checks when they changed. */
  private async refresh(): Promise<void> {
    const node = this.node;
    if (this.closed || !node) return;
    const { options } = this.server;
    const stored = await options.store.get({ type: dataplaneKind.name, mesh: node.mesh, name: node.name });
    if (!stored) {
      this.schedule(REGISTRATION_WAIT_MS);
      return;
    }
    const spec = JSON.parse(stored.spec) as DataplaneSpec;
    await options.authenticator.authenticateDataplane(this.credential, { mesh: node.mesh, name: node.name, spec });
    this.authenticated = true;
    const specifier = healthCheckSpecifier(spec, this.adminAddress(node), options.settings);
    const text = JSON.stringify(specifier);
    if (text !== this.lastSent && !this.closed) {
      this.lastSent = text;
      this.call.write(specifier);
    }
    this.schedule(options.settings.refreshIntervalMs);
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.queue = this.queue.then(() => this.refresh()).catch((error: unknown) => this.refuse(error));
    }, delayMs);
    this.timer.unref();
  }

  /** Envoy's admin API as the node announced it, on loopback; undefined when it is elsewhere. */
  private adminAddress(node: ProxyNode): SocketAddress | undefined {
    const host = adminHostOf(stringMetadata(node, METADATA.adminAddress) ?? '');
    return host ? { address: host, portValue: adminPortOf(node) ?? this.server.options.defaultAdminPort } : undefined;
  }

  private async applyReport(health: ReadonlyMap<string, boolean>): Promise<void> {
    const node = this.node;
    if (!node || health.size === 0) return;
    const { options } = this.server;
    const stored = await options.store.get({ type: dataplaneKind.name, mesh: node.mesh, name: node.name });
    if (!stored) return;
    const next = withReportedHealth(JSON.parse(stored.spec) as DataplaneSpec, health);
    if (!next) return;
    try {
      await options.manager.apply(dataplaneKind, { mesh: node.mesh, name: node.name }, { type: dataplaneKind.name, mesh: node.mesh, name: node.name, labels: stored.labels, ...next });
      options.logger.info({ proxy: node.id, inbounds: next.networking?.inbound?.map((inbound) => ({ port: inbound.port, ready: inbound.health?.ready })) }, 'inbound health changed');
    } catch (error) {
      // Another write came first (the proxy registering again): the next report, an interval later, tries again.
      options.logger.warn({ err: error, proxy: node.id }, 'could not write the health of the inbounds');
    }
  }

  private refuse(error: unknown): void {
    if (this.closed) return;
    const refusal = error instanceof StreamRefusal ? error : undefined;
    const message = refusal ? refusal.message : `internal error: ${error instanceof Error ? error.message : String(error)}`;
    this.server.options.logger.warn({ proxy: this.node?.id, reason: message }, 'closing a health discovery stream');
    this.call.fail(refusal?.code ?? status.INTERNAL, message);
    this.close();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  end(): void {
    this.close();
    this.call.fail(status.UNAVAILABLE, 'the control plane is shutting down');
  }
}

/** Serves `HealthDiscoveryService/StreamHealthCheck` (docs/xds.md, Health from the control plane). */
export class HdsServer {
  private readonly streams = new Set<HealthStream>();

  constructor(readonly options: HdsServerOptions) {}

  handleStream(call: AdsCall<HealthStreamMessage, HealthCheckSpecifier>): void {
    if (!this.options.settings.enabled) {
      call.fail(status.UNIMPLEMENTED, 'health checking by the control plane is turned off (dpServer.hds.enabled)');
      return;
    }
    const stream = new HealthStream(this, call);
    this.streams.add(stream);
    call.on('data', (message: HealthStreamMessage) => stream.take(message));
    const over = () => {
      this.streams.delete(stream);
      stream.close();
    };
    call.on('end', () => {
      over();
      call.end();
    });
    call.on('close', over);
  }

  /** Ends every stream: Envoy opens it again, here or on another instance. */
  shutdown(): void {
    for (const stream of this.streams) stream.end();
    this.streams.clear();
  }
}
