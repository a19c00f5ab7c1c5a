// The data plane server of a zone or standalone control plane (docs/xds.md), from the
// configuration: `dpServer.*` (health discovery included), `bootstrapServer.params.*`, `xdsServer.*`, `metrics.dataplane.*`.
import { parseDurationNanos, type Mode } from '@mesh/model';
import type { ProxyConfigService } from '@mesh/proxy-config';
import type { ResourceManager } from '@mesh/resource-manager';
import type { ResourceReader } from '@mesh/store';
import type { TokenService } from '@mesh/tokens';
import { type AuthnType, DataplaneServer } from '@mesh/xds-server';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigError, type ControlPlaneConfig } from './config.js';
import { listenError } from './listen.js';
import type { Leadership } from './store.js';
import { loadTlsMaterial } from './tls.js';
import { createXdsMetrics } from './xds-metrics.js';

export interface DpServerDependencies {
  config: ControlPlaneConfig;
  mode: Mode;
  store: ResourceReader;
  manager: ResourceManager;
  proxyConfigs: ProxyConfigService;
  tokens: TokenService;
  instanceId: string;
  leadership: Leadership;
  logger: Logger;
  /** The registry the server's `xds_*` metrics join. */
  registry: Registry;
}

const millis = (duration: string, setting: string): number => {
  const nanos = parseDurationNanos(duration);
  if (nanos === undefined) throw new ConfigError(`expected a duration, got "${duration}"`, setting);
  return nanos / 1e6;
};

function authnType(value: string, token: 'dpToken' | 'zoneToken', setting: string): AuthnType {
  if (value === token || value === 'none') return value;
  throw new ConfigError(`expected "${token}" or "none", got "${value}"`, setting);
}

/** Starts the data plane server; a global control plane serves no proxies and runs none. */
export async function startDpServer(deps: DpServerDependencies): Promise<DataplaneServer | undefined> {
  const { config, logger } = deps;
  if (deps.mode === 'global') return undefined;
  const dp = config.dpServer;
  const dataplanes = authnType(dp.authn.dpProxy.type, 'dpToken', 'dpServer.authn.dpProxy.type');
  const zoneProxies = authnType(dp.authn.zoneProxy.type, 'zoneToken', 'dpServer.authn.zoneProxy.type');
  let tls: { cert: string; key: string } | undefined;
  if (dp.tls.enabled) {
    const material = await loadTlsMaterial(config, { certFile: dp.tlsCertFile, keyFile: dp.tlsKeyFile, setting: 'dpServer' });
    tls = { cert: material.cert, key: material.key };
    logger.info({ certificate: material.source }, 'data plane server certificate');
  }
  const params = config.bootstrapServer.params;
  const server = await DataplaneServer.start({
    store: deps.store,
    manager: deps.manager,
    proxyConfigs: deps.proxyConfigs,
    tokens: deps.tokens,
    instanceId: deps.instanceId,
    logger: logger.child({ component: 'dp-server' }),
    port: dp.port,
    tls,
    authn: { dataplanes, zoneProxies },
    zone: config.multizone.zone.name,
    bootstrap: {
      adminAddress: params.adminAddress,
      adminPort: params.adminPort,
      adminAccessLogPath: params.adminAccessLogPath,
      xdsHost: params.xdsHost,
      xdsPort: params.xdsPort,
      xdsConnectTimeout: `${millis(params.xdsConnectTimeout, 'bootstrapServer.params.xdsConnectTimeout') / 1000}s`,
    },
    hds: {
      enabled: dp.hds.enabled,
      intervalMs: millis(dp.hds.interval, 'dpServer.hds.interval'),
      refreshIntervalMs: millis(dp.hds.refreshInterval, 'dpServer.hds.refreshInterval'),
      checkDefaults: {
        timeoutMs: millis(dp.hds.checkDefaults.timeout, 'dpServer.hds.checkDefaults.timeout'),
        intervalMs: millis(dp.hds.checkDefaults.interval, 'dpServer.hds.checkDefaults.interval'),
        noTrafficIntervalMs: millis(dp.hds.checkDefaults.noTrafficInterval, 'dpServer.hds.checkDefaults.noTrafficInterval'),
        healthyThreshold: dp.hds.checkDefaults.healthyThreshold,
        unhealthyThreshold: dp.hds.checkDefaults.unhealthyThreshold,
      },
    },
    flushIntervalMs: millis(config.xdsServer.dataplaneStatusFlushInterval, 'xdsServer.dataplaneStatusFlushInterval'),
    subscriptionLimit: config.metrics.dataplane.subscriptionLimit,
    idleTimeoutMs: millis(config.metrics.dataplane.idleTimeout, 'metrics.dataplane.idleTimeout'),
    nackBackoffMs: millis(config.xdsServer.nackBackoff, 'xdsServer.nackBackoff'),
    deregistrationDelayMs: millis(config.xdsServer.dataplaneDeregistrationDelay, 'xdsServer.dataplaneDeregistrationDelay'),
    leadership: deps.leadership,
    metrics: createXdsMetrics(deps.registry),
  }).catch((error: NodeJS.ErrnoException) => {
    throw listenError(error, 'dpServer.port', dp.port);
  });
  logger.info({ port: server.port, tls: Boolean(tls), authn: { dataplanes, zoneProxies } }, 'data plane server started');
  return server;
}
