// Multi-zone for a control plane: the global's sync port, a zone's connection to its global, and
// the services a zone's ingresses offer (docs/multizone.md).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody, InternalApi, isForwardedPath, type ZoneAdmin } from '@mesh/http-api';
import { GlobalSyncServer, zoneTokenAuthentication, ZoneIngressServices, ZoneSyncClient, type SyncLogger, type SyncMetrics, type Version } from '@mesh/kds';
import { parseDurationNanos, PRODUCT_VERSION, type Mode } from '@mesh/model';
import type { ResourceManager } from '@mesh/resource-manager';
import type { TokenService } from '@mesh/tokens';
import { ConfigError, type ControlPlaneConfig } from './config.js';
import { listenError } from './listen.js';
import type { Leadership } from './store.js';
import { loadTlsMaterial } from './tls.js';

export interface MultizoneOptions {
  config: ControlPlaneConfig;
  mode: Mode;
  manager: ResourceManager;
  tokens: TokenService;
  leadership: Leadership;
  /** Whether no other instance shares the store. */
  soleInstance: boolean;
  instanceId: string;
  clusterId: string;
  /** The configuration as `/config` shows it (secrets masked), which a zone reports to its global. */
  effectiveConfig: Record<string, unknown>;
  logger: SyncLogger;
  metrics: SyncMetrics;
}

export interface Multizone {
  /** On a global: reaches the connected zones (inspection of their proxies). */
  zoneAdmin?: ZoneAdmin;
  /** The sync port, on a global. */
  port?: number;
  /** On a zone that leads its instances: whether it is connected to the global (readiness). */
  isSynced(): boolean;
  /** On a zone: the API app, which answers what the global forwards. */
  serveApi(app: (req: IncomingMessage, res: ServerResponse) => void): Promise<void>;
  stop(): Promise<void>;
}

const millis = (duration: string) => (parseDurationNanos(duration) ?? 0) / 1e6;

/** Unix socket paths are short (about 100 bytes): in the work directory when it fits, else the temporary one. */
function internalSocketPath(workDir: string): string {
  const inWorkDir = join(workDir, 'api.sock');
  return inWorkDir.length < 100 ? inWorkDir : join(tmpdir(), `mesh-api-${process.pid}-${randomUUID().slice(0, 8)}.sock`);
}

export const BUILD_VERSION: Version = { version: PRODUCT_VERSION, gitTag: PRODUCT_VERSION, gitCommit: 'unknown', buildDate: 'unknown' };

/** The address this zone's API can be reached at, as it reports it to the global. */
function apiUrl(config: ControlPlaneConfig): string {
  if (config.apiServer.rootUrl) return config.apiServer.rootUrl;
  const host = config.general.advertisedHostname === 'localhost' ? hostname() : config.general.advertisedHostname;
  const { http, https } = config.apiServer;
  return http.enabled ? `http://${host}:${http.port}` : `https://${host}:${https.port}`;
}

function readZoneToken(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 'multizone.zone.kds.authn.zoneTokenFile');
  }
}

export async function startMultizone(options: MultizoneOptions): Promise<Multizone> {
  const { config, mode, manager, leadership, logger } = options;
  const stops: Array<() => Promise<void>> = [];
  const result: Multizone = { isSynced: () => true, serveApi: async () => {}, stop: async () => void (await Promise.all(stops.map((stop) => stop()))) };

  if (mode !== 'global') {
    const services = new ZoneIngressServices({
      manager,
      zone: config.multizone.zone.name,
      tagFilters: config.experimental.ingressTagFilters,
      isLeader: () => leadership.isLeader,
      logger,
    });
    services.start();
    leadership.onChange((leader) => void (leader && services.refresh()));
    stops.push(() => services.stop());
  }

  if (mode === 'global') {
    const kds = config.multizone.global.kds;
    const tls = kds.tlsEnabled ? await loadTlsMaterial(config, { certFile: kds.tlsCertFile, keyFile: kds.tlsKeyFile, setting: 'multizone.global.kds' }) : undefined;
    const server = new GlobalSyncServer({
      manager,
      instanceId: options.instanceId,
      clusterId: options.clusterId,
      version: BUILD_VERSION,
      port: kds.grpcPort,
      ...(tls ? { tls } : {}),
      maxMessageBytes: kds.maxMsgSize,
      zoneInsightFlushMs: millis(kds.zoneInsightFlushInterval),
      subscriptionLimit: config.metrics.zone.subscriptionLimit,
      compactFinishedSubscriptions: config.metrics.zone.compactFinishedSubscriptions,
      idleTimeoutMs: millis(config.metrics.zone.idleTimeout),
      healthCheckIntervalMs: millis(kds.zoneHealthCheck.pollInterval),
      soleInstance: options.soleInstance,
      ...(kds.authn.type === 'zoneToken' ? { authenticate: zoneTokenAuthentication(options.tokens) } : {}),
      isLeader: () => leadership.isLeader,
      logger,
      metrics: options.metrics,
    });
    result.port = await server.start().catch((error: NodeJS.ErrnoException) => {
      throw listenError(error, 'multizone.global.kds.grpcPort', kds.grpcPort);
    });
    result.zoneAdmin = { forward: (zone, path) => server.forward(zone, path) };
    stops.push(() => server.stop());
    logger.info({ port: result.port, tls: tls?.source ?? false }, 'zone sync listening');
  }

  if (mode === 'zone') {
    const zone = config.multizone.zone;
    let api: InternalApi | undefined;
    const client = new ZoneSyncClient({
      manager,
      zone: zone.name,
      globalAddress: zone.globalAddress,
      ...(zone.kds.rootCaFile ? { rootCaFile: zone.kds.rootCaFile } : {}),
      tlsSkipVerify: zone.kds.tlsSkipVerify,
      ...(zone.kds.authn.zoneTokenFile ? { token: readZoneToken(zone.kds.authn.zoneTokenFile) } : {}),
      clusterId: options.clusterId,
      version: BUILD_VERSION,
      config: JSON.stringify(options.effectiveConfig),
      url: apiUrl(config),
      maxMessageBytes: zone.kds.maxMsgSize,
      serveAdminRequest: async (path) => {
        // The global asks for its zone proxies' inspection views; nothing else of the API is served to it.
        if (!isForwardedPath(path)) return { status: 403, contentType: 'application/json', body: JSON.stringify(errorBody(403, 'Forbidden', `the global may not ask for ${path}`)) };
        if (!api) return { status: 503, contentType: 'application/json', body: '' };
        return api.get(path);
      },
      logger,
      metrics: options.metrics,
    });
    result.serveApi = async (app) => {
      api = await InternalApi.listen(app, internalSocketPath(config.general.workDir));
      stops.push(() => api!.close());
    };
    // The zone's connection to its global is work that runs once: on the leader.
    if (leadership.isLeader) client.start();
    leadership.onChange((leader) => (leader ? client.start() : void client.stop()));
    result.isSynced = () => !leadership.isLeader || client.connected;
    stops.push(() => client.stop());
  }
  return result;
}
