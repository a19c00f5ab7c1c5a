// The data plane server of a zone or standalone control plane (docs/xds.md): ADS and
// `POST /bootstrap` on one port, proxy insights, the finalizer of lost subscriptions, and the live
// views of connected proxies for the REST API.
import { DomainError, getKind } from '@mesh/model';
import type { ProxyConfigService } from '@mesh/proxy-config';
import type { ResourceManager } from '@mesh/resource-manager';
import type { ResourceStore } from '@mesh/store';
import type { TokenService } from '@mesh/tokens';
import type { ConfigDump, ProxyConfig } from '@mesh/xds-renderer';
import { AdsServer, type ConnectedProxy, type Logger } from './ads-server.js';
import { Authenticator, type AuthnType } from './auth.js';
import { answerBootstrap, BootstrapGenerator, type BootstrapSettings } from './bootstrap.js';
import { envoyRoot } from './envoy-protos.js';
import { AdminUnavailable, fetchAdmin, isLoopback } from './envoy-admin.js';
import { InsightWriter, SubscriptionFinalizer } from './insights.js';
import { METADATA, RESOURCE_TYPE_OF } from './proxy-node.js';
import { TYPE_URLS } from './snapshot.js';
import type { XdsMetrics } from './telemetry.js';
import { DataplaneTransport } from './transport.js';

/** Which instance runs the work that must run once (the finalizer). */
export interface Leadership {
  readonly isLeader: boolean;
  onChange(listener: (leader: boolean) => void): void;
}

export interface DataplaneServerOptions {
  store: ResourceStore;
  manager: ResourceManager;
  proxyConfigs: ProxyConfigService;
  tokens: TokenService;
  /** This process's instance id (subscriptions record it). */
  instanceId: string;
  logger: Logger;
  port: number;
  address?: string;
  /** Certificate and key (PEM); absent serves plain text (`dpServer.tls.enabled: false`). */
  tls: { cert: string; key: string } | undefined;
  authn: { dataplanes: AuthnType; zoneProxies: AuthnType };
  /** This zone's name (zone tokens name it); empty on a standalone control plane. */
  zone: string;
  bootstrap: BootstrapSettings;
  flushIntervalMs: number;
  subscriptionLimit: number;
  /** `metrics.dataplane.idleTimeout`: the finalizer's period; live streams move on a generation twice as often. */
  idleTimeoutMs: number;
  nackBackoffMs: number;
  deregistrationDelayMs: number;
  leadership: Leadership;
  /** Where the server reports streams, responses, ACKs and configuration computations. */
  metrics?: XdsMetrics;
  now?: () => Date;
}

/** Reauthentication of a live stream's token, at most this often (docs/xds.md, Authentication). */
const REAUTHENTICATE_AFTER_MS = 10_000;

export class DataplaneServer {
  private finalizerTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly options: DataplaneServerOptions,
    private readonly ads: AdsServer,
    private readonly writer: InsightWriter,
    private readonly transport: DataplaneTransport,
    private readonly finalizer: SubscriptionFinalizer,
  ) {}

  /** Opens the port and begins serving; the finalizer runs on the leader. */
  static async start(options: DataplaneServerOptions): Promise<DataplaneServer> {
    const now = options.now ?? (() => new Date());
    // Load Envoy's message definitions before the first stream needs them.
    envoyRoot();
    const onError = (error: unknown, what: string) => options.logger.error({ err: error }, `could not write ${what}`);
    const authenticator = new Authenticator({ tokens: options.tokens, dataplanes: options.authn.dataplanes, zoneProxies: options.authn.zoneProxies, zone: options.zone });
    const writer = new InsightWriter({ manager: options.manager, store: options.store, subscriptionLimit: options.subscriptionLimit, now, onError });
    const ads = new AdsServer({
      store: options.store,
      manager: options.manager,
      proxyConfigs: options.proxyConfigs,
      authenticator,
      insights: writer,
      instanceId: options.instanceId,
      logger: options.logger,
      now,
      flushIntervalMs: options.flushIntervalMs,
      generationIntervalMs: Math.max(1000, options.idleTimeoutMs / 2),
      nackBackoffMs: options.nackBackoffMs,
      deregistrationDelayMs: options.deregistrationDelayMs,
      reauthenticateAfterMs: REAUTHENTICATE_AFTER_MS,
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
    const generator = new BootstrapGenerator({
      store: options.store,
      authenticator,
      settings: options.bootstrap,
      port: options.port,
      certificatePem: options.tls?.cert,
    });
    const transport = await DataplaneTransport.start({
      port: options.port,
      address: options.address ?? '0.0.0.0',
      tls: options.tls,
      maxReceiveMessageLength: 16 * 1024 * 1024,
      onStream: (call) => ads.handleStream(call),
      onDeltaStream: (call) => ads.handleDeltaStream(call),
      bootstrap: (call) => answerBootstrap(generator, call, (error) => options.logger.error({ err: error }, 'could not generate a bootstrap configuration')),
      onFailure: (error) => {
        options.logger.error({ err: error }, 'the data plane transport stopped');
        // Proxies can no longer connect: the process ends as on any fatal error, for its supervisor to restart it.
        setImmediate(() => {
          throw error;
        });
      },
    });
    const finalizer = new SubscriptionFinalizer(options.manager, options.store, now);
    const server = new DataplaneServer(options, ads, writer, transport, finalizer);
    await server.startFinalizer();
    return server;
  }

  /** The port it listens on (the one asked for, or the one given for port 0). */
  get port(): number {
    return this.transport.port;
  }

  /** Proxies connected to this instance. */
  get connectedProxies(): number {
    return this.ads.connectedCount;
  }

  /**
   * Stops accepting, ends every stream (proxies reconnect elsewhere or later) and writes their
   * subscriptions closed, within `timeoutMs`.
   */
  async stop(timeoutMs: number): Promise<void> {
    clearInterval(this.finalizerTimer);
    void this.transport.close();
    const ended = this.ads.shutdown();
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
    await this.transport.stop();
  }

  /** `/xds` of a connected proxy: what was last sent on its stream, in Envoy's config dump shape. */
  async configDump(proxy: { type: string; mesh: string; name: string }): Promise<ConfigDump | undefined> {
    const connected = this.ads.connected(proxy.type, proxy.mesh, proxy.name);
    if (!connected) return undefined;
    const sent = connected.sent;
    const config = sentConfig(connected);
    if (!config) return undefined;
    const versionOf = (typeUrl: string) => sent.get(typeUrl)?.version;
    const times = [...sent.values()].map((entry) => entry.at.getTime());
    const { [METADATA.token]: _token, ...nodeMetadata } = connected.node.metadata;
    const options = {
      versions: {
        ...optional('listeners', versionOf(TYPE_URLS.listener)),
        ...optional('clusters', versionOf(TYPE_URLS.cluster)),
        ...optional('endpoints', versionOf(TYPE_URLS.endpoints)),
        ...optional('routes', versionOf(TYPE_URLS.route)),
        ...optional('secrets', versionOf(TYPE_URLS.secret)),
      },
      ...(times.length > 0 ? { lastUpdated: new Date(Math.max(...times)).toISOString() } : {}),
      nodeMetadata,
    };
    const { proxyConfigs } = this.options;
    await proxyConfigs.settled();
    if (proxy.type === RESOURCE_TYPE_OF.ingress) return proxyConfigs.zoneIngressConfigDump(proxy.name, options, config);
    if (proxy.type === RESOURCE_TYPE_OF.egress) return proxyConfigs.zoneEgressConfigDump(proxy.name, options, config);
    return proxyConfigs.mesh(proxy.mesh)?.configDump(proxy.name, options, config);
  }

  /**
   * Envoy's `/stats` or `/clusters` of a proxy, from its admin API: at the admin port it reported
   * when connected here, else the one of its resource. 503 when it cannot be reached.
   */
  async admin(proxy: { type: string; mesh: string; name: string }, operation: 'stats' | 'clusters', query: string): Promise<{ body: string; contentType: string }> {
    const stored = await this.options.store.get({ type: proxy.type, mesh: proxy.mesh, name: proxy.name });
    if (!stored) throw new DomainError('not_found', 'Not found', { title: `Could not get ${getKind(proxy.type).singularDisplayName.toLowerCase()} resource` });
    const networking = (JSON.parse(stored.spec) as { networking?: { address?: string; advertisedAddress?: string; admin?: { port?: number } } }).networking ?? {};
    const connected = this.ads.connected(proxy.type, proxy.mesh, proxy.name);
    const reported = connected ? Number(connected.node.metadata[METADATA.adminPort]) : Number.NaN;
    const port = Number.isInteger(reported) && reported > 0 ? reported : networking.admin?.port || this.options.bootstrap.adminPort;
    const address = networking.advertisedAddress || networking.address || '';
    const title = 'Could not execute admin operation';
    if (!isLoopback(address)) {
      // Off the loopback interface Envoy's admin is only exposed over mTLS to the control plane, which is not issued yet.
      throw new DomainError('unavailable', `the admin API of a proxy at ${address} is only reached on a loopback address by this control plane`, { title });
    }
    try {
      return await fetchAdmin(address === 'localhost' ? '127.0.0.1' : address, port, `/${operation}${query ? `?${query}` : ''}`);
    } catch (error) {
      if (!(error instanceof AdminUnavailable)) throw error;
      const state = connected ? 'connected' : 'not connected to this control plane instance';
      throw new DomainError('unavailable', `the proxy (${state}) did not answer on its admin API at ${address}:${port}: ${error.message}`, { title });
    }
  }

  /**
   * Closes lost subscriptions (docs/xds.md, Insights): the leader sweeps at start, which notes the
   * generation of every open subscription, then every idle timeout, closing those that did not
   * move. The streams a restarted control plane lost show disconnected within one idle timeout.
   */
  private async startFinalizer(): Promise<void> {
    const { options } = this;
    const sweep = () =>
      this.finalizer.sweep().then(
        (closed) => {
          if (closed > 0) options.logger.info({ closed }, 'marked the subscriptions of lost xDS streams disconnected');
        },
        (error: unknown) => options.logger.error({ err: error }, 'could not finalize lost subscriptions'),
      );
    if (options.leadership.isLeader) await sweep();
    this.finalizerTimer = setInterval(() => {
      if (options.leadership.isLeader) void sweep();
    }, options.idleTimeoutMs);
    this.finalizerTimer.unref();
  }
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}

/** The resources last sent of each type, from the snapshot each was taken from. */
function sentConfig(connected: ConnectedProxy): ProxyConfig | undefined {
  const sent = connected.sent;
  if (sent.size === 0) return connected.snapshot?.config;
  const pick = <T>(typeUrl: string, of: (config: ProxyConfig) => readonly T[], nameOf: (item: T) => string): T[] => {
    const entry = sent.get(typeUrl);
    if (!entry) return [];
    const names = new Set(entry.names);
    return of(entry.from.config).filter((item) => names.has(nameOf(item)));
  };
  return {
    listeners: pick(TYPE_URLS.listener, (config) => config.listeners, (listener) => listener.name),
    clusters: pick(TYPE_URLS.cluster, (config) => config.clusters, (cluster) => cluster.name),
    endpoints: pick(TYPE_URLS.endpoints, (config) => config.endpoints, (assignment) => assignment.clusterName),
    routes: [],
    secrets: pick(TYPE_URLS.secret, (config) => config.secrets, (secret) => secret.name),
  };
}
