// The monitoring assignment server of a control plane (docs/xds.md, Proxy metrics and monitoring
// assignments), from the configuration: `monitoringAssignmentServer.*`. Every mode runs it: a global control plane
// holds the proxies of its zones.
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { guardConnections } from '@mesh/http-api';
import { parseDurationNanos } from '@mesh/model';
import type { ResourceReader } from '@mesh/store';
import type { Logger } from 'pino';
import { ConfigError, type ControlPlaneConfig } from './config.js';
import { listen } from './listen.js';
import { MonitoringAssignmentService } from './monitoring-assignments.js';
import { loadTlsMaterial } from './tls.js';

export interface RunningMadsServer {
  server: Server;
  port: number;
  /** Answers the requests waiting for a change, so that the server can close. */
  stopWaiting(): void;
}

function positiveMillis(duration: string, setting: string): number {
  const nanos = parseDurationNanos(duration);
  if (nanos === undefined || nanos <= 0) throw new ConfigError(`${setting}: must be a positive duration, got "${duration}"`);
  return nanos / 1e6;
}

export async function startMadsServer(config: ControlPlaneConfig, store: ResourceReader, logger: Logger): Promise<RunningMadsServer> {
  const settings = config.monitoringAssignmentServer;
  const unknownVersions = settings.apiVersions.filter((version) => version !== 'v1');
  if (settings.apiVersions.length === 0 || unknownVersions.length > 0) {
    throw new ConfigError(`monitoringAssignmentServer.apiVersions: must list the served versions, of which there is one: v1; got [${settings.apiVersions.join(', ')}]`);
  }
  if ((settings.tlsCertFile === '') !== (settings.tlsKeyFile === '')) {
    throw new ConfigError('monitoringAssignmentServer.tlsCertFile and tlsKeyFile: must be set together');
  }
  const service = new MonitoringAssignmentService({
    store,
    defaultFetchTimeoutMs: (parseDurationNanos(settings.defaultFetchTimeout) ?? 0) / 1e6,
    refreshIntervalMs: positiveMillis(settings.assignmentRefreshInterval, 'monitoringAssignmentServer.assignmentRefreshInterval'),
    onError: (err) => logger.error({ err }, 'monitoring assignments could not be made'),
  });
  let server: Server;
  if (settings.tlsEnabled) {
    const tls = await loadTlsMaterial(config, { certFile: settings.tlsCertFile, keyFile: settings.tlsKeyFile, setting: 'monitoringAssignmentServer' });
    server = createHttpsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' }, service.handle);
  } else {
    server = createHttpServer(service.handle);
  }
  guardConnections(server);
  try {
    const port = await listen(server, settings.port, '0.0.0.0', 'monitoringAssignmentServer');
    logger.info({ port, tls: settings.tlsEnabled }, 'monitoring assignment server started');
    return { server, port, stopWaiting: () => service.stop() };
  } catch (error) {
    service.stop();
    throw error;
  }
}
