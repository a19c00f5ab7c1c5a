// The data plane runner as an operator meets it: the zone binary, `mesh-dp` and real Envoy. A
// refused token shows in mesh-dp's own log, decoded; a refused bootstrap is retried until its
// cause is gone; a file it cannot read is named in its error; a second SIGTERM does not wait out
// the drain.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_DATAPLANE, eventually, MESH_DP, requireEnvoy } from './testing/envoy.js';
import { type ControlPlaneProcess, freePort, startControlPlane } from './testing/process.js';

const envoy = requireEnvoy('mesh-dp.e2e');

let cp: ControlPlaneProcess;
const controlPlanes: ControlPlaneProcess[] = [];
const runners: MeshDp[] = [];

interface MeshDp {
  dir: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** mesh-dp's own log lines (JSON), beside Envoy's. */
const ownLines = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; msg: string });

async function issueToken(mesh: string, name: string): Promise<string> {
  const res = await fetch(`${cp.url}/tokens/dataplane`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, mesh, validFor: '1h' }) });
  const token = await res.text();
  if (res.status !== 200) throw new Error(`dataplane token for ${mesh}/${name}: ${res.status} ${token}`);
  return token;
}

/** Runs `mesh-dp run` against `controlPlane` for a backend proxy named `name` in `mesh`, with `token` in its token file. */
async function runMeshDp(controlPlane: ControlPlaneProcess, mesh: string, name: string, token: string, extraArgs: string[] = []): Promise<MeshDp> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-dp-e2e-'));
  const templateFile = join(dir, 'dataplane.yaml');
  const tokenFile = join(dir, 'token');
  writeFileSync(templateFile, BACKEND_DATAPLANE.replace('mesh: default', `mesh: ${mesh}`));
  writeFileSync(tokenFile, token);
  const adminPort = await freePort();
  const args = ['run', '--cp-address', `https://127.0.0.1:${controlPlane.env.MESH_DP_SERVER_PORT}`, '--ca-cert-file', join(controlPlane.workDir, 'mesh-cp.crt')];
  args.push('--dataplane-file', templateFile, '--dataplane-token-file', tokenFile, '--admin-port', String(adminPort), '--binary-path', envoy!);
  args.push('--concurrency', '1', '--envoy-log-level', 'warning', '--config-dir', dir, '--drain-time', '0s');
  for (const [key, value] of Object.entries({ name, port: String(await freePort()), appPort: '1', version: 'v1' })) args.push('--dataplane-var', `${key}=${value}`);
  const child = spawn(process.execPath, [MESH_DP, ...args, ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const runner = { dir, child, output: () => output, exited: new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))) };
  runners.push(runner);
  return runner;
}

/** Resolves with the runner's exit code, or with `still running` once `ms` have passed. */
async function exitWithin(runner: MeshDp, ms: number): Promise<number | null | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const later = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms)));
  const result = await Promise.race([runner.exited, later]);
  clearTimeout(timer);
  return result;
}

const isOnline = async (controlPlane: ControlPlaneProcess, mesh: string, name: string) => {
  const res = await fetch(`${controlPlane.url}/meshes/${mesh}/dataplanes+insights/${name}`);
  const body = (await res.json()) as { dataplaneInsight?: { subscriptions?: Array<{ connectTime?: string; disconnectTime?: string }> } };
  return (body.dataplaneInsight?.subscriptions ?? []).some((s) => s.connectTime && !s.disconnectTime);
};

beforeAll(async () => {
  if (!envoy) return;
  cp = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(await freePort()) } });
  controlPlanes.push(cp);
}, 60_000);

afterAll(async () => {
  const running = runners.filter((runner) => runner.child.exitCode === null && runner.child.signalCode === null);
  await Promise.all(
    running.map(async (runner) => {
      // Twice, so that a runner still draining stops its Envoy at once.
      runner.child.kill('SIGTERM');
      runner.child.kill('SIGTERM');
      if ((await exitWithin(runner, 20_000)) === 'still running') runner.child.kill('SIGKILL');
    }),
  );
  await Promise.all(controlPlanes.map((controlPlane) => controlPlane.stop()));
  for (const runner of runners) rmSync(runner.dir, { recursive: true, force: true });
}, 60_000);

describe.skipIf(!envoy)('mesh-dp with real Envoy and the zone binary', () => {
  it("logs the control plane's refusal of Envoy's stream itself, decoded, at error level, once however often Envoy retries", { timeout: 90_000 }, async () => {
    const runner = await runMeshDp(cp, 'default', 'refused-1', await issueToken('default', 'someone-else'));
    const envoyWarning = 'authentication%20failed:%20proxy%20name%20from%20requestor:%20refused-1%20is%20different%20than%20in%20token:%20someone-else';
    await eventually(
      () => runner.output().split(envoyWarning).length - 1,
      (warnings) => warnings >= 3,
      "Envoy's stream to be refused three times",
      60_000,
    );
    const errors = ownLines(runner.output()).filter((line) => line.level === 'error');
    expect(errors.map((line) => line.msg)).toEqual(["the control plane refused Envoy's configuration stream: authentication failed: proxy name from requestor: refused-1 is different than in token: someone-else"]);
    runner.child.kill('SIGTERM');
    expect(await runner.exited).toBe(0);
  });

  it('retries a refused bootstrap with a doubling wait, saying why at error level, and starts the proxy once the cause is gone', { timeout: 240_000 }, async () => {
    // Without token checks, so that only the missing mesh stands in the way.
    const open = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(await freePort()), MESH_DP_SERVER_AUTHN_DP_PROXY_TYPE: 'none' } });
    controlPlanes.push(open);
    const runner = await runMeshDp(open, 'later', 'late-1', '', ['--cp-retry-backoff', '1s']);
    const refusals = () =>
      ownLines(runner.output()).filter((line) => line.level === 'error' && line.msg.startsWith('the control plane refused the bootstrap request: mesh: mesh "later" does not exist; retrying in'));
    await eventually(() => refusals().length, (count) => count >= 2, 'the bootstrap to be refused twice', 60_000);
    expect(refusals().slice(0, 2).map((line) => line.msg.split('retrying in ')[1])).toEqual(['1s', '2s']);
    expect(runner.child.exitCode).toBeNull();

    const created = await fetch(`${open.url}/meshes/later`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'Mesh', name: 'later' }) });
    expect(created.status).toBe(201);
    await eventually(() => isOnline(open, 'later', 'late-1'), (online) => online, 'the proxy to come online', 90_000);
    runner.child.kill('SIGTERM');
    expect(await runner.exited).toBe(0);
  });

  it('exits with an error naming the option and the file when a file it is given cannot be read', { timeout: 60_000 }, async () => {
    const missing = join(tmpdir(), 'mesh-dp-e2e-missing', 'mesh-cp.crt');
    const runner = await runMeshDp(cp, 'default', 'no-ca-1', await issueToken('default', 'no-ca-1'), ['--ca-cert-file', missing]);
    expect(await runner.exited).toBe(1);
    expect(runner.output()).toBe(`Error: could not read --ca-cert-file ${missing}: no such file\n`);
  });

  it('stops without waiting out the drain on a second SIGTERM', { timeout: 120_000 }, async () => {
    const runner = await runMeshDp(cp, 'default', 'draining-1', await issueToken('default', 'draining-1'), ['--drain-time', '120s']);
    await eventually(() => isOnline(cp, 'default', 'draining-1'), (online) => online, 'the proxy to come online', 60_000);
    runner.child.kill('SIGTERM');
    await eventually(() => runner.output(), (output) => output.includes('caught an exit signal, draining Envoy connections'), 'the drain to begin', 30_000);
    runner.child.kill('SIGTERM');
    expect(await exitWithin(runner, 30_000)).toBe(0);
    expect(runner.output()).toContain('"msg":"Envoy terminated"');
  });
});
