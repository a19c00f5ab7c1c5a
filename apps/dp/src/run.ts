// `mesh-dp run`: render the proxy resource, fetch the Envoy bootstrap for it from the control
// plane (which registers the proxy when Envoy connects; the request asks for the DNS listener),
// write it, serve the metrics socket and the access log pipe Envoy is configured with, run Envoy,
// pass signals on after a drain, say when the control plane refuses Envoy's xDS stream, and exit
// with Envoy's status. Nothing is restarted: a process manager does that.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants as osConstants, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PRODUCT_VERSION } from '@mesh/model';
import { startAccessLogStreamer } from './access-log-streamer.js';
import { type BootstrapRequest, type BootstrapResponse, fetchBootstrap } from './bootstrap-client.js';
import { envoyVersion, failHealthChecks, findEnvoy, startEnvoy } from './envoy.js';
import { passOnLines, RefusalReporter } from './envoy-log.js';
import { log } from './log.js';
import { type ScrapeTarget, startMetricsHijacker } from './metrics-hijacker.js';
import { isProxyType, parseVars, readResource, renderTemplate } from './resource.js';

export interface RunOptions {
  cpAddress: string;
  caCertFile?: string;
  name?: string;
  mesh?: string;
  proxyType: string;
  dataplane?: string;
  dataplaneFile?: string;
  dataplaneVar: string[];
  dataplaneTokenFile?: string;
  dataplaneToken?: string;
  adminPort?: number;
  binaryPath: string;
  configDir?: string;
  /** Where the metrics socket and the access log pipe go (default: the config directory). */
  socketDir?: string;
  /** The certificate and key of the metrics listener, for a prometheus backend with `tls.mode: providedTLS`. */
  metricsCertPath?: string;
  metricsKeyPath?: string;
  drainTime: number;
  concurrency: number;
  envoyLogLevel: string;
  envoyComponentLogLevel: string;
  retryBackoffMs: number;
  retryMaxDurationMs: number;
  /** `DELTA_GRPC`: Envoy asks for incremental xDS (the bootstrap request names the feature). */
  xdsTransportProtocolVariant: string;
  /** Whether a transparent proxy gets a DNS resolver for its application. */
  dnsEnabled: boolean;
  /** The loopback port that resolver listens on. */
  dnsPort: number;
}

/** The bootstrap request's feature asking for incremental xDS (docs/xds.md, Incremental xDS). */
const FEATURE_DELTA_GRPC = 'feature-delta-grpc';

/** A socket path in `dir`, cut to fit the length of a Unix socket's path on every system. */
function socketPath(dir: string, prefix: string, name: string, mesh: string): string {
  return `${join(dir, `${prefix}-${name}-${mesh}`).slice(0, 98)}.sock`;
}

/** The sources of a scrape: the applications the control plane named, then Envoy's admin. */
function scrapeTargets(bootstrap: BootstrapResponse, admin: { address: string; port: number } | undefined): ScrapeTarget[] {
  const targets: ScrapeTarget[] = (bootstrap.meshSidecarConfiguration?.metrics?.aggregate ?? []).map((entry) => ({
    name: entry.name,
    address: entry.address,
    port: entry.port,
    path: entry.path || '/',
    envoyAdmin: false,
  }));
  if (admin) targets.push({ name: 'envoy', address: admin.address, port: admin.port, path: '/stats/prometheus', envoyAdmin: true });
  return targets;
}

/** A file an option names, or an error naming the option and the file (a control plane that has not yet generated its certificate, a mistyped path). */
function readOptionFile(option: string, file: string | 0): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new Error(`could not read ${option} ${file === 0 ? '-' : file}: ${code === 'ENOENT' ? 'no such file' : message}`, { cause: error });
  }
}

/** The proxy resource to register, with `--admin-port` put into it; undefined when none is given (it is stored already). */
function proxyResource(options: RunOptions) {
  const template = options.dataplaneFile ? readOptionFile('--dataplane-file', options.dataplaneFile === '-' ? 0 : options.dataplaneFile) : (options.dataplane ?? '');
  if (!template) return undefined;
  const resource = readResource(renderTemplate(template, parseVars(options.dataplaneVar)), options.proxyType);
  if (options.name || options.mesh) throw new Error('--name and --mesh cannot be specified when a dataplane definition is provided, mesh and name will be read from the dataplane definition');
  if (options.adminPort !== undefined) {
    const networking = (resource.body.networking ?? {}) as Record<string, unknown>;
    resource.body.networking = { ...networking, admin: { ...((networking.admin as object | undefined) ?? {}), port: options.adminPort } };
  }
  return resource;
}

/** Runs the proxy until Envoy exits; resolves with the exit code to leave with. */
export async function run(options: RunOptions): Promise<number> {
  if (!isProxyType(options.proxyType)) throw new Error(`invalid proxy type "${options.proxyType}"`);
  const resource = proxyResource(options);
  const mesh = resource?.mesh ?? options.mesh ?? '';
  const name = resource?.name ?? options.name ?? '';
  if (!name) throw new Error('name of the proxy is required: pass --dataplane-file (or --dataplane), or --name and --mesh of a stored one');
  const caCert = options.caCertFile ? readOptionFile('--ca-cert-file', options.caCertFile) : '';
  if (options.cpAddress.startsWith('https:') && !caCert) {
    log('info', '[WARNING] The data plane proxy cannot verify the identity of the control plane because you are not setting the "--ca-cert-file" argument or setting the MESH_CONTROL_PLANE_CA_CERT_FILE environment variable.');
  }
  const token = (options.dataplaneToken ?? (options.dataplaneTokenFile ? readOptionFile('--dataplane-token-file', options.dataplaneTokenFile) : '')).trim();
  const binary = findEnvoy(options.binaryPath);
  const envoy = await envoyVersion(binary);
  log('info', 'fetched Envoy version', { version: envoy.version });

  const ownDir = options.configDir ? undefined : mkdtempSync(join(tmpdir(), 'mesh-dp-'));
  const configDir = options.configDir ?? ownDir ?? '';
  mkdirSync(configDir, { recursive: true });
  const socketDir = options.socketDir ?? configDir;
  mkdirSync(socketDir, { recursive: true });
  const accessLogPipe = socketPath(socketDir, 'mesh-al', name, mesh);
  const metricsSocket = socketPath(socketDir, 'mesh-mh', name, mesh);
  const closers: Array<() => unknown> = [];
  try {
    const request: BootstrapRequest = {
      mesh,
      name,
      proxyType: options.proxyType,
      ...(token ? { dataplaneToken: token } : {}),
      ...(options.dataplaneTokenFile ? { dataplaneTokenPath: options.dataplaneTokenFile } : {}),
      ...(resource ? { dataplaneResource: JSON.stringify(resource.body) } : {}),
      version: { meshDp: { version: PRODUCT_VERSION, gitTag: `v${PRODUCT_VERSION}`, gitCommit: '', buildDate: '' }, envoy: { ...envoy, meshDpCompatible: true } },
      caCert,
      dynamicMetadata: {},
      // Envoy itself answers there: the control plane adds the DNS listener to transparent proxies.
      ...(options.dnsEnabled && options.proxyType === 'dataplane' ? { dnsPort: options.dnsPort } : {}),
      operatingSystem: platform(),
      features: options.xdsTransportProtocolVariant === 'DELTA_GRPC' ? [FEATURE_DELTA_GRPC] : [],
      resources: { maxHeapSizeBytes: 0 },
      accessLogSocketPath: accessLogPipe,
      metricsResources: { socketPath: metricsSocket, certPath: options.metricsCertPath ?? '', keyPath: options.metricsKeyPath ?? '' },
    };
    log('info', 'generating bootstrap configuration');
    const bootstrap = await fetchBootstrap(request, {
      cpAddress: options.cpAddress,
      caCert,
      backoffMs: options.retryBackoffMs,
      maxDurationMs: options.retryMaxDurationMs,
      log,
    });
    const configPath = join(configDir, 'bootstrap.yaml');
    writeFileSync(configPath, bootstrap.bootstrap, { mode: 0o600 });
    const admin = adminOf(bootstrap.bootstrap);
    const adminPort = admin?.port;
    log('info', 'bootstrap configuration saved to a file', { file: configPath, adminPort });
    // Both exist before Envoy starts: it opens the pipe when it loads a listener that logs to it.
    const streamer = await startAccessLogStreamer({ pipePath: accessLogPipe, log });
    closers.push(() => streamer.close());
    const hijacker = await startMetricsHijacker({
      socketPath: metricsSocket,
      targets: scrapeTargets(bootstrap, admin),
      transparentProxying: bootstrap.meshSidecarConfiguration?.networking?.isUsingTransparentProxy ?? false,
      log,
    });
    closers.push(() => hijacker.close());
    return await superviseEnvoy(
      startEnvoy({
        binary,
        configPath,
        drainTimeSeconds: Math.round(options.drainTime),
        logLevel: options.envoyLogLevel,
        componentLogLevel: options.envoyComponentLogLevel,
        concurrency: options.concurrency,
      }),
      adminPort,
      options.drainTime,
    );
  } finally {
    await Promise.all(closers.map((close) => close()));
    if (ownDir) rmSync(ownDir, { recursive: true, force: true });
  }
}

/** Envoy's admin address and port in the bootstrap; an unspecified address is reached on loopback. */
function adminOf(bootstrap: string): { address: string; port: number } | undefined {
  try {
    const socket = (JSON.parse(bootstrap) as { admin?: { address?: { socketAddress?: { address?: string; portValue?: number } } } }).admin?.address?.socketAddress;
    if (typeof socket?.portValue !== 'number') return undefined;
    const address = socket.address === '::' ? '::1' : !socket.address || socket.address === '0.0.0.0' ? '127.0.0.1' : socket.address;
    return { address, port: socket.portValue };
  } catch {
    return undefined;
  }
}

/**
 * Waits for Envoy to exit, passing its log on. The first SIGTERM, SIGINT or SIGHUP drains (Envoy
 * fails its health checks for `drainTime` seconds), then is passed on; a second one is passed on
 * at once and ends the drain. Once Envoy is gone nothing is left waiting, so the runner exits.
 */
function superviseEnvoy(child: ReturnType<typeof startEnvoy>, adminPort: number | undefined, drainTime: number): Promise<number> {
  log('info', 'starting Envoy', { pid: child.pid });
  const refusals = new RefusalReporter(log);
  if (child.stderr) passOnLines(child.stderr, process.stderr, (line) => refusals.line(line));
  return new Promise((resolve, reject) => {
    let state: 'running' | 'draining' | 'stopping' | 'exited' = 'running';
    let drainTimer: NodeJS.Timeout | undefined;
    const stop = (signal: NodeJS.Signals) => {
      clearTimeout(drainTimer);
      state = 'stopping';
      log('info', 'stopping Envoy');
      child.kill(signal);
    };
    const onSignal = (signal: NodeJS.Signals) => {
      if (state !== 'running') {
        log('info', 'caught a second exit signal, stopping Envoy without waiting for the drain', { signal });
        stop(signal);
        return;
      }
      log('info', 'caught an exit signal, draining Envoy connections', { signal, drainTime });
      if (adminPort === undefined || drainTime <= 0) {
        stop(signal);
        return;
      }
      state = 'draining';
      void failHealthChecks(adminPort).then(() => {
        if (state === 'draining') drainTimer = setTimeout(() => stop(signal), drainTime * 1000);
      });
    };
    const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
    for (const signal of signals) process.on(signal, onSignal);
    const finish = () => {
      state = 'exited';
      clearTimeout(drainTimer);
      for (const signal of signals) process.off(signal, onSignal);
    };
    child.once('error', (error) => {
      finish();
      reject(new Error(`could not start Envoy: ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      finish();
      const status = code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0);
      log('info', 'Envoy terminated', { code, signal });
      resolve(status);
    });
  });
}
