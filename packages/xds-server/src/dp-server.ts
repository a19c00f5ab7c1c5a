// The data plane server of a zone or standalone control plane (docs/xds.md): ADS, health
// discovery and `POST /bootstrap` on one port, proxy insights, the finalizer of lost subscriptions, and the live
// views of connected proxies for the REST API.
import { DomainError, getKind } from '@mesh/model';
import type { ProxyConfigService } from '@mesh/proxy-config';
import type { ResourceManager } from '@mesh/resource-manager';
import type { ResourceReader } from '@mesh/store';
import type { TokenService } from '@mesh/tokens';
import { type ConfigDump, type ConfigDumpSection, type ProxyConfig, scalarText } from '@mesh/xds-renderer';
import { AdsServer, type ConnectedProxy, type Logger } from './ads-server.js';
import type { SentResources } from './ads-stream.js';
import { Authenticator, type AuthnType } from './auth.js';
import { answerBootstrap, BootstrapGenerator, type BootstrapSettings } from './bootstrap.js';
import { envoyRoot } from './envoy-protos.js';
import { HdsServer, type HdsSettings } from './hds.js';
import { AdminUnavailable, adminHostOf, fetchAdmin, isThisHost } from './envoy-admin.js';
import { InsightWriter, insightKindOf, SubscriptionFinalizer } from './insights.js';
import { adminPortOf, METADATA, RESOURCE_TYPE_OF, stringMetadata } from './proxy-node.js';
import { snapshotOf, TYPE_URLS } from './snapshot.js';
import type { XdsMetrics } from './telemetry.js';
import { DataplaneTransport } from './transport.js';

/** Which instance runs the work that must run once (the finalizer). */
export interface Leadership {
  readonly isLeader: boolean;
  onChange(listener: (leader: boolean) => void): void;
}

export interface DataplaneServerOptions {
  store: ResourceReader;
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
  /** `dpServer.hds.*` (docs/xds.md, Health from the control plane). */
  hds: HdsSettings;
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
    private readonly hds: HdsServer,
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
      healthChecks: options.hds.enabled,
    });
    const hds = new HdsServer({
      store: options.store,
      manager: options.manager,
      authenticator,
      settings: options.hds,
      defaultAdminPort: options.bootstrap.adminPort,
      logger: options.logger,
    });
    const transport = await DataplaneTransport.start({
      port: options.port,
      address: options.address ?? '0.0.0.0',
      tls: options.tls,
      maxReceiveMessageLength: 16 * 1024 * 1024,
      onStream: (call) => ads.handleStream(call),
      onDeltaStream: (call) => ads.handleDeltaStream(call),
      onHealthStream: (call) => hds.handleStream(call),
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
    const server = new DataplaneServer(options, ads, hds, writer, transport, finalizer);
    await server.startFinalizer();
    return server;
  }

  /** The port it listens on (the one asked for, or the one given for port 0). */
  get port(): number {
    return this.transport.port;
  }

  /**
   * Renders and encodes every dataplane's configuration ahead of its proxy's connection
   * (docs/architecture.md, Start-up): proxies reconnecting after a restart are served from them.
   * Resolves with the number of dataplanes.
   */
  prepare(): Promise<number> {
    // The snapshot itself is not kept: its encodings are, while the configuration lives.
    return this.options.proxyConfigs.prepare((config) => void snapshotOf(config));
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
    this.hds.shutdown();
    const ended = this.ads.shutdown();
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
    await this.transport.stop();
  }

  /** `/xds` of a connected proxy: what was last sent on its stream, in Envoy's config dump shape. */
  async configDump(proxy: { type: string; mesh: string; name: string }): Promise<ConfigDump | undefined> {
    const connected = this.ads.connected(proxy.type, proxy.mesh, proxy.name);
    if (!connected) return undefined;
    const sent = connected.sent;
    const config = sentConfig(connected, sent);
    if (!config) return undefined;
    // Each section carries its own type's version and time: a push of endpoints leaves the listeners' as they were.
    const versions: Partial<Record<ConfigDumpSection, string>> = {};
    const lastUpdated: Partial<Record<ConfigDumpSection | 'bootstrap', string>> = { bootstrap: connected.connectedAt.toISOString() };
    for (const [section, typeUrl] of SECTION_TYPES) {
      const entry = sent.get(typeUrl);
      if (!entry) continue;
      versions[section] = entry.version;
      lastUpdated[section] = entry.at.toISOString();
    }
    const { [METADATA.token]: _token, ...nodeMetadata } = connected.node.metadata;
    const options = { versions, lastUpdated, nodeMetadata };
    const { proxyConfigs } = this.options;
    await proxyConfigs.settled();
    if (proxy.type === RESOURCE_TYPE_OF.ingress) return proxyConfigs.zoneIngressConfigDump(proxy.name, options, config);
    if (proxy.type === RESOURCE_TYPE_OF.egress) return proxyConfigs.zoneEgressConfigDump(proxy.name, options, config);
    return proxyConfigs.mesh(proxy.mesh)?.configDump(proxy.name, options, config);
  }

  /**
   * Envoy's `/stats` or `/clusters` of a proxy, from its admin API (docs/xds.md, Inspection): only
   * of a proxy whose stream is open on this instance and comes from this host, at the admin
   * address and port its node metadata announced (its bootstrap put them there), never at a port
   * its resource names. Every failure is a 503 whose message is our own: nothing an address
   * answered is passed on.
   */
  async admin(proxy: { type: string; mesh: string; name: string }, operation: 'stats' | 'clusters', query: string): Promise<{ body: string; contentType: string }> {
    const stored = await this.options.store.get({ type: proxy.type, mesh: proxy.mesh, name: proxy.name });
    if (!stored) throw new DomainError('not_found', 'Not found', { title: `Could not get ${getKind(proxy.type).singularDisplayName.toLowerCase()} resource` });
    const unavailable = (detail: string) => new DomainError('unavailable', detail, { title: 'Could not execute admin operation' });
    const connected = this.ads.connected(proxy.type, proxy.mesh, proxy.name);
    if (!connected) {
      const instance = await this.instanceHolding(proxy);
      // Instances do not forward to one another: the caller has to reach the one holding the stream.
      throw unavailable(
        instance
          ? `the proxy is connected to another instance of the control plane (${instance}); its admin API is reached only through that instance`
          : 'the proxy is not connected to this control plane',
      );
    }
    if (!isThisHost(connected.peerAddress)) {
      // Off this host Envoy's admin is only exposed over mTLS to the control plane, which is not issued yet.
      throw unavailable("the proxy does not run on this control plane's host; its admin API is reached only on a loopback address");
    }
    const port = adminPortOf(connected.node);
    if (port === undefined) throw unavailable('the proxy did not announce an admin port when it connected');
    const announced = stringMetadata(connected.node, METADATA.adminAddress) ?? '';
    const host = adminHostOf(announced);
    if (!host) throw unavailable(`the proxy announced its admin API on ${announced}; it is reached only on a loopback address`);
    try {
      return await fetchAdmin(host, port, `/${operation}${query ? `?${query}` : ''}`);
    } catch (error) {
      if (!(error instanceof AdminUnavailable)) throw error;
      this.options.logger.warn({ proxy: connected.node.id, port, reason: error.message }, 'could not reach the admin API of a proxy');
      throw unavailable(`the proxy did not answer on its admin API at ${host}:${port}`);
    }
  }

  /** The other instance a proxy's stream is open on, as the last subscription of its insight says. */
  private async instanceHolding(proxy: { type: string; mesh: string; name: string }): Promise<string | undefined> {
    const insight = await this.options.store.get({ type: insightKindOf(proxy.type).name, mesh: proxy.mesh, name: proxy.name });
    if (!insight) return undefined;
    const last = (JSON.parse(insight.spec) as { subscriptions?: Array<{ controlPlaneInstanceId?: string; disconnectTime?: string }> }).subscriptions?.at(-1);
    const instance = last?.controlPlaneInstanceId;
    return instance && !last.disconnectTime && instance !== this.options.instanceId ? instance : undefined;
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

/** The dump's section of each resource type. */
const SECTION_TYPES: ReadonlyArray<[ConfigDumpSection, string]> = [
  ['listeners', TYPE_URLS.listener],
  ['clusters', TYPE_URLS.cluster],
  ['endpoints', TYPE_URLS.endpoints],
  ['routes', TYPE_URLS.route],
  ['secrets', TYPE_URLS.secret],
];

/** The resources last sent of each type, from the snapshot each was taken from. */
function sentConfig(connected: ConnectedProxy, sent: ReadonlyMap<string, SentResources>): ProxyConfig | undefined {
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
    routes: pick(TYPE_URLS.route, (config) => config.routes, (route) => scalarText(route.name)),
    secrets: pick(TYPE_URLS.secret, (config) => config.secrets, (secret) => secret.name),
  };
}
