// Starting and stopping a control plane: store, insights, proxy configuration, API servers, diagnostics.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { guardConnections, createApiApp, type ApiApp, type ApiContext } from '@mesh/http-api';
import { InsightAggregator } from '@mesh/insights';
import { DomainError, parseDurationNanos, PRODUCT, PRODUCT_VERSION, type Mode } from '@mesh/model';
import { registerCaHooks } from '@mesh/pki';
import { ProxyConfigService, VipAllocator } from '@mesh/proxy-config';
import { ResourceManager } from '@mesh/resource-manager';
import { bootstrapTokens, registerSigningKeyHooks, SigningKeys, TokenService } from '@mesh/tokens';
import { pino, type Logger } from 'pino';
import { apiLimits, apiServerOptions } from './api-server.js';
import { effectiveConfig, resolveConfig, type ControlPlaneConfig, type ControlPlaneSettings } from './config.js';
import { guiOptions } from './gui.js';
import { createDiagnosticsApp } from './diagnostics.js';
import { startDpServer } from './dp-server.js';
import { closeGracefully, listen } from './listen.js';
import { type RunningMadsServer, startMadsServer } from './mads-server.js';
import { MeteredResourceStore } from './metered-store.js';
import { createMetrics } from './metrics.js';
import { startMultizone, type Multizone } from './multizone.js';
import { createSyncMetrics } from './sync-metrics.js';
import { requestLog } from './request-log.js';
import { openStore } from './store.js';
import { loadClientCertAuthorities, loadTlsMaterial } from './tls.js';
import { prepareWorkDir } from './work-dir.js';

/** The ports a control plane listens on: the ones it was given, or the ones the system chose for 0. */
export interface ControlPlanePorts {
  http?: number;
  https?: number;
  diagnostics?: number;
  /** The data plane server, where proxies connect (none on a global). */
  dp?: number;
  /** The zone sync server of a global. */
  kds?: number;
  mads?: number;
}

/** Where to reach a running control plane from this machine. */
export interface ControlPlaneAddresses {
  /** The API over HTTP (`http://127.0.0.1:5681`), unless `apiServer.http.enabled` is false. */
  api?: string;
  /** The API over TLS (`https://127.0.0.1:5682`), unless `apiServer.https.enabled` is false. */
  apiHttps?: string;
  /** `/ready`, `/healthy`, `/metrics`. */
  diagnostics: string;
  /** The data plane server, `mesh-dp --cp-address` (`https://127.0.0.1:5678`); none on a global. */
  dpServer?: string;
  /** The zone sync server of a global, a zone's `multizone.zone.globalAddress` (`grpcs://127.0.0.1:5685`). */
  kds?: string;
}

export interface RunningControlPlane {
  /** The configuration it runs with: the defaults, the settings over them, derived values (the SQLite path). */
  config: ControlPlaneConfig;
  ports: ControlPlanePorts;
  addresses: ControlPlaneAddresses;
  instanceId: string;
  clusterId: string;
  /** Stops serving, lets requests in flight finish (`runtime.shutdownTimeout`) and closes the store. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Where it logs; nothing is logged without one. */
  logger?: Logger;
}

const CLUSTER_ID_SETTING = 'clusterId';

/** The data plane server, none on a global. */
type DpServer = Awaited<ReturnType<typeof startDpServer>>;

/** An address this machine reaches a server on: loopback for a server listening on every interface. */
function localHost(listeningOn: string): string {
  if (listeningOn === '' || listeningOn === '0.0.0.0') return '127.0.0.1';
  if (listeningOn === '::') return '[::1]';
  return listeningOn.includes(':') ? `[${listeningOn}]` : listeningOn;
}

function addressesOf(config: ControlPlaneConfig, ports: ControlPlanePorts): ControlPlaneAddresses {
  const loopback = '127.0.0.1';
  return {
    ...(ports.http !== undefined ? { api: `http://${localHost(config.apiServer.http.interface)}:${ports.http}` } : {}),
    ...(ports.https !== undefined ? { apiHttps: `https://${localHost(config.apiServer.https.interface)}:${ports.https}` } : {}),
    diagnostics: `http://${loopback}:${ports.diagnostics}`,
    ...(ports.dp !== undefined ? { dpServer: `${config.dpServer.tls.enabled ? 'https' : 'http'}://${loopback}:${ports.dp}` } : {}),
    ...(ports.kds !== undefined ? { kds: `${config.multizone.global.kds.tlsEnabled ? 'grpcs' : 'grpc'}://${loopback}:${ports.kds}` } : {}),
  };
}

/**
 * Starts a standalone, zone or global control plane in this process (`mode`), as the binaries do:
 * `settings` over the defaults, checked as a configuration file is (a `ConfigError` names the key
 * and its variable); port 0 takes a free port, which `ports` and `addresses` tell. Unlike the
 * binaries, nothing is read from the environment or a file (`loadConfig` does that).
 */
export async function startControlPlane(settings: ControlPlaneSettings = {}, options: StartOptions = {}): Promise<RunningControlPlane> {
  const config = resolveConfig(settings);
  const logger = options.logger ?? pino({ level: 'silent' });
  const mode = config.mode as Mode;
  // Checked before anything starts: a bad GUI path or URL is a configuration error.
  const gui = guiOptions(config);
  prepareWorkDir(config.general.workDir);
  const { store: unmeteredStore, isAvailable, leadership, location } = await openStore(config, logger);
  const store = new MeteredResourceStore(unmeteredStore);
  const zoneName = config.multizone.zone.name || undefined;
  const manager = new ResourceManager({
    store,
    mode,
    apiReadOnly: config.apiServer.readOnly || config.environment === 'kubernetes',
    ...(zoneName ? { zoneName } : {}),
  });
  // The rules of other packages on writes: the CAs of meshes, their token signing keys.
  registerCaHooks(manager);
  registerSigningKeyHooks(manager);
  // Everything but the manager reads: a write that bypasses it does not type-check (docs/architecture.md, Readers and the writer).
  const reader = manager.reader;
  const insights = new InsightAggregator({ store: reader, onError: (err) => logger.error({ err }, 'insights: a change could not be applied') });
  const proxyConfigs = new ProxyConfigService({ store: reader, localZone: zoneName, onError: (err) => logger.error({ err }, 'proxy configuration: changes could not be applied') });
  // Virtual IPs of services and hosts for transparent proxies (docs/xds.md, Service names and virtual IPs); a global has no proxies.
  const { dnsServer } = config;
  const vips = mode === 'global' ? undefined : new VipAllocator({
    store: reader,
    settings: { domain: dnsServer.domain, cidr: dnsServer.CIDR, serviceVipEnabled: dnsServer.serviceVipEnabled, serviceVipPort: dnsServer.serviceVipPort },
    localZone: zoneName,
    putSetting: (key, value) => manager.putSetting(key, value),
    isLeader: () => leadership.isLeader,
    onChange: (mesh, meshVips) => proxyConfigs.setMeshVips(mesh, meshVips),
    log: logger.child({ component: 'dns-vips-allocator' }),
  });
  const servers: Server[] = [];
  let multizone: Multizone | undefined;
  let dpServer: DpServer;
  let app: ApiApp | undefined;
  let mads: RunningMadsServer | undefined;
  let ready = false;

  const stop = async () => {
    ready = false;
    const timeoutMs = (parseDurationNanos(config.runtime.shutdownTimeout) ?? 10e9) / 1e6;
    await multizone?.stop();
    await dpServer?.stop(timeoutMs);
    // Streams of changes and waiting discovery requests never end by themselves: ended first, the servers close without waiting on them.
    app?.close();
    mads?.stopWaiting();
    await Promise.all(servers.map((server) => closeGracefully(server, timeoutMs)));
    await insights.stop();
    await vips?.stop();
    await proxyConfigs.stop();
    await leadership.stop();
    await store.close();
  };

  try {
    let clusterId = await reader.getSetting(CLUSTER_ID_SETTING);
    if (!clusterId) {
      clusterId = randomUUID();
      await manager.putSetting(CLUSTER_ID_SETTING, clusterId);
    }
    const instanceId = randomUUID();
    const keys = new SigningKeys(reader);
    const tokens = new TokenService({ keys });
    // What runs once runs on the leader of the instances sharing the store (the embedded store's one instance leads).
    const createDefaults = async () => {
      if (mode !== 'zone' && !config.defaults.skipMeshCreation && !config.defaults.skipTenantResources) await manager.ensureDefaultMesh();
      await bootstrapTokens({ manager, keys, tokens, mode, bootstrapAdminToken: config.apiServer.authn.tokens.bootstrapAdminToken });
    };
    if (leadership.isLeader) await createDefaults();
    leadership.onChange((leader) => {
      if (leader) createDefaults().catch((err: unknown) => logger.error({ err }, 'the defaults (mesh, signing keys, admin token) could not be created'));
      if (leader) vips?.recomputeAll();
    });

    // The API serves as soon as the store is read (docs/architecture.md, Start-up): what the
    // insights, proxy configurations and data plane server compute after it, a request waits for.
    // They load in slices that leave the event loop to the API's requests.
    const startedLoadingAt = performance.now();
    const derivedStateLoaded = Promise.all([insights.start(), proxyConfigs.start()]);
    // Awaited once the servers listen; a failure before that stops the start without it.
    derivedStateLoaded.catch(() => {});
    const metrics = createMetrics(store, insights);
    const shownConfig = effectiveConfig(config);
    multizone = await startMultizone({
      config,
      mode,
      manager,
      tokens,
      leadership,
      soleInstance: config.store.type !== 'postgres',
      instanceId,
      clusterId,
      effectiveConfig: shownConfig,
      logger,
      metrics: createSyncMetrics(metrics.registry),
    });
    let dpServerStarted: (server: DpServer) => void = () => {};
    const startedDpServer = new Promise<DpServer>((resolve) => (dpServerStarted = resolve));
    const proxyInspector: NonNullable<ApiContext['proxyInspector']> = {
      configDump: async (proxy) => (await startedDpServer)?.configDump(proxy),
      admin: async (proxy, operation, query) => {
        const server = await startedDpServer;
        if (!server) throw new DomainError('unavailable', 'the data plane server is not running', { title: 'Could not execute admin operation' });
        return server.admin(proxy, operation, query);
      },
    };
    app = createApiApp({
      observeRequest: metrics.observeRequest,
      requestLogger: requestLog(logger),
      manager,
      insights,
      proxyConfigs,
      mode,
      zoneName,
      access: {
        localhostIsAdmin: config.apiServer.authn.localhostIsAdmin,
        clientCertsAreAdmins: config.apiServer.auth.clientCertsDir !== '',
        tokens,
        rules: config.access.static,
      },
      corsAllowedDomains: config.apiServer.corsAllowedDomains,
      limits: apiLimits(config),
      logger,
      info: { hostname: config.general.advertisedHostname === 'localhost' ? hostname() : config.general.advertisedHostname, product: PRODUCT, version: PRODUCT_VERSION, instanceId, clusterId },
      effectiveConfig: shownConfig,
      gui,
      ...(multizone.zoneAdmin ? { zoneAdmin: multizone.zoneAdmin } : {}),
      ...(mode === 'global' ? {} : { proxyInspector }),
    });
    await multizone.serveApi(app);
    const serverOptions = { ...apiServerOptions(config), ...app.serverOptions };

    const ports: ControlPlanePorts = {};
    const api = config.apiServer;
    if (api.http.enabled) {
      const server = createHttpServer(serverOptions, app);
      guardConnections(server);
      servers.push(server);
      ports.http = await listen(server, api.http.port, api.http.interface, 'apiServer.http.port');
    }
    if (api.https.enabled) {
      const tls = await loadTlsMaterial(config);
      const authorities = loadClientCertAuthorities(config);
      const clientCerts = authorities.length > 0 ? { requestCert: true, rejectUnauthorized: api.https.requireClientCert, ca: authorities } : { requestCert: api.https.requireClientCert };
      const server = createHttpsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2', ...clientCerts, ...serverOptions }, app);
      guardConnections(server);
      servers.push(server);
      ports.https = await listen(server, api.https.port, api.https.interface, 'apiServer.https.port');
      logger.info({ certificate: tls.source }, 'HTTPS certificate');
    }
    const synced = multizone;
    const diagnostics = createHttpServer(createDiagnosticsApp(() => ready && isAvailable() && synced.isSynced(), metrics.registry));
    servers.push(diagnostics);
    ports.diagnostics = await listen(diagnostics, config.diagnostics.serverPort, '0.0.0.0', 'diagnostics.serverPort');

    // Not ready (/ready) until what proxies need is computed and the data plane server serves them.
    await derivedStateLoaded;
    await vips?.start();
    try {
      // The data plane server (docs/xds.md): proxies connect to it; the API shows their live views.
      dpServer = await startDpServer({ config, mode, store: reader, manager, proxyConfigs, tokens, instanceId, leadership, logger, registry: metrics.registry });
    } finally {
      dpServerStarted(dpServer);
    }

    // Prometheus discovers the proxies to scrape here (docs/xds.md, Proxy metrics and monitoring assignments).
    mads = await startMadsServer(config, reader, logger.child({ component: 'mads-server' }));
    servers.push(mads.server);
    ports.mads = mads.port;

    if (multizone.port !== undefined) ports.kds = multizone.port;
    if (dpServer) ports.dp = dpServer.port;
    ready = true;
    logger.info({ mode, ports, store: location, instanceId, clusterId }, 'control plane started');
    if (dpServer) {
      dpServer.prepare().then(
        (proxies) => logger.info({ proxies, ms: Math.round(performance.now() - startedLoadingAt) }, 'proxy configurations ready'),
        (err: unknown) => logger.error({ err }, 'proxy configurations could not be prepared'),
      );
    }
    return { config, ports, addresses: addressesOf(config, ports), instanceId, clusterId, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
