// The binaries' own command lines: one product version for all of them, help, the reference's
// `run` habit, the defaults reference, and a refused start as an operator sees it on a terminal
// and as a log collector sees it.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { MESH_DP } from './testing/envoy.js';
import { BINARIES, freePort, startControlPlane } from './testing/process.js';

const run = promisify(execFile);
const MESHCTL = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'meshctl', 'dist', 'main.js');

const command = (script: string) => (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? '', ...env } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
const zone = command(BINARIES['mesh-zone']);

/** Colours and the terminal's carriage returns, which a reader does not see. */
const ANSI_AND_CR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m|\\r`, 'g');

/**
 * mesh-zone with a terminal as its stdout and stderr (`script` from util-linux gives it one), as
 * started from an operator's shell; `output` is what the terminal shows.
 */
function zoneOnTerminal(env: Record<string, string>) {
  const child = spawn('script', ['-qec', `exec '${process.execPath}' '${BINARIES['mesh-zone']}'`, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    exited,
    output: () => output.replace(ANSI_AND_CR, ''),
    stop: () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The settings of a start on free ports in a new work directory, `overrides` last. */
async function startEnv(overrides: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    MESH_GENERAL_WORK_DIR: mkdtempSync(join(tmpdir(), 'mesh-start-')),
    MESH_API_SERVER_HTTP_PORT: String(await freePort()),
    MESH_API_SERVER_HTTPS_PORT: String(await freePort()),
    MESH_DIAGNOSTICS_SERVER_PORT: String(await freePort()),
    MESH_DP_SERVER_PORT: String(await freePort()),
    ...overrides,
  };
}

/** A port held by another listener for the time of `body`. */
async function withTakenPort<T>(body: (port: number) => Promise<T>): Promise<T> {
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
  try {
    return await body((taken.address() as { port: number }).port);
  } finally {
    taken.close();
  }
}

/** A refused start: its settings, the line a terminal shows, and the key and variable the refusal names. */
interface Refusal {
  env: Record<string, string>;
  line: string;
  setting?: string;
  variable?: string;
}

const REFUSALS: Refusal[] = [
  {
    env: { MESH_API_SERVR_HTTP_PORT: '6681' },
    line: 'Error: invalid configuration: MESH_API_SERVR_HTTP_PORT: names no configuration key; did you mean apiServer.http.port (MESH_API_SERVER_HTTP_PORT)?',
  },
  {
    env: { MESH_API_SERVER_HTTP_PORT: 'http' },
    line: 'Error: invalid configuration: apiServer.http.port (MESH_API_SERVER_HTTP_PORT): expected an integer, got "http"',
    setting: 'apiServer.http.port',
    variable: 'MESH_API_SERVER_HTTP_PORT',
  },
  {
    env: { MESH_XDS_SERVER_NACK_BACKOFF: 'soon' },
    line: 'Error: invalid configuration: xdsServer.nackBackoff (MESH_XDS_SERVER_NACK_BACKOFF): expected a duration such as 10s, 500ms or 1m30s, got "soon"',
    setting: 'xdsServer.nackBackoff',
    variable: 'MESH_XDS_SERVER_NACK_BACKOFF',
  },
];

describe('the version', () => {
  it('is the same product version for every binary, with `version` and `--version`', async () => {
    const printed = [];
    for (const script of [BINARIES['mesh-zone'], BINARIES['mesh-global'], MESH_DP]) {
      for (const args of [['version'], ['--version']]) printed.push(await command(script)(args));
    }
    printed.push(await command(MESHCTL)(['--version']));
    expect(printed.map((p) => p.code)).toEqual(printed.map(() => 0));
    const versions = printed.map((p) => /^(?:Mesh: |Client: Mesh )(\d+\.\d+\.\d+)\n$/.exec(p.stdout)?.[1]);
    expect(versions[0]).toMatch(/^\d+\.\d+\.\d+$/);
    expect(new Set(versions)).toEqual(new Set([versions[0]]));
    expect(printed[0]!.stdout).toBe(`Mesh: ${versions[0]}\n`);
    expect(printed.at(-1)!.stdout).toBe(`Client: Mesh ${versions[0]}\n`);
  });
});

describe('mesh-zone command line', () => {
  it('prints a help that names the environment variables', async () => {
    const help = (await zone(['--help'])).stdout;
    expect(help).toContain('run [options]');
    expect(help).toContain('MESH_API_SERVER_HTTP_PORT');
    expect((await zone(['run', '--help'])).stdout).toContain('--config-file <file>');
  });

  it('prints the default configuration as YAML with the variable of each key', async () => {
    const printed = (await zone(['config', 'print-defaults'])).stdout;
    expect(printed).toContain('port: 5681 # MESH_API_SERVER_HTTP_PORT');
    expect(parse(printed)).toMatchObject({ mode: 'standalone', apiServer: { http: { port: 5681 } }, store: { type: 'sqlite' } });
  });

  it('refuses to start with a MESH_* variable that names no configuration key', async () => {
    const started = await zone(['run'], { MESH_API_SERVR_HTTP_PORT: '6681', MESH_GENERAL_WORK_DIR: '/tmp' });
    expect(started.code).toBe(1);
    expect(started.stdout + started.stderr).toContain('MESH_API_SERVR_HTTP_PORT: names no configuration key');
  });
});

describe('a refused start', () => {
  it('is one plain line on a terminal, naming the key and its variable, without a stack', async () => {
    for (const { env, line } of REFUSALS) {
      const started = zoneOnTerminal(await startEnv(env));
      expect(await started.exited).toBe(1);
      expect(started.output()).toBe(`${line}\n`);
    }
  });

  it('on a port in use, is one plain line on a terminal naming the port\'s key and variable, without a stack', async () => {
    await withTakenPort(async (port) => {
      const started = zoneOnTerminal(await startEnv({ MESH_DP_SERVER_PORT: String(port) }));
      expect(await started.exited).toBe(1);
      const lines = started.output().trimEnd().split('\n');
      expect(lines.filter((l) => l.includes('Error') || l.includes('FATAL'))).toEqual([`Error: dpServer.port (MESH_DP_SERVER_PORT): port ${port} is already in use`]);
      expect(lines.at(-1)).toBe(`Error: dpServer.port (MESH_DP_SERVER_PORT): port ${port} is already in use`);
      expect(started.output()).not.toMatch(/^\s+at /m);
    });
  });

  it('is a JSON log line off a terminal, its error naming the key and its variable', async () => {
    const fatal = async (env: Record<string, string>) => {
      const started = await zone([], await startEnv(env));
      expect(started.code).toBe(1);
      return JSON.parse(started.stdout.trim().split('\n').at(-1)!) as { level: number; msg: string; err: Record<string, string> };
    };
    for (const { env, line, setting, variable } of REFUSALS) {
      const logged = await fatal(env);
      expect(logged).toMatchObject({ level: 60, msg: 'invalid configuration', err: { type: 'ConfigError', message: line.replace('Error: invalid configuration: ', '') } });
      if (setting) expect(logged.err).toMatchObject({ setting, variable });
    }
    await withTakenPort(async (port) => {
      const message = `dpServer.port (MESH_DP_SERVER_PORT): port ${port} is already in use`;
      expect(await fatal({ MESH_DP_SERVER_PORT: String(port) })).toMatchObject({ level: 60, msg: message, err: { message, setting: 'dpServer.port', variable: 'MESH_DP_SERVER_PORT' } });
    });
  });
});

describe('the log on a terminal', () => {
  it('takes one line per request', async () => {
    const env = await startEnv();
    const started = zoneOnTerminal(env);
    try {
      const ready = `http://127.0.0.1:${env.MESH_DIAGNOSTICS_SERVER_PORT}/ready`;
      for (let up = false; !up; ) {
        up = await fetch(ready).then((res) => res.ok, () => false);
        if (!up) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const res = await fetch(`http://127.0.0.1:${env.MESH_API_SERVER_HTTP_PORT}/meshes/default`, { headers: { 'x-request-id': 'one-line-please' } });
      expect(res.status).toBe(200);
      while (!started.output().includes('one-line-please')) await new Promise((resolve) => setTimeout(resolve, 50));
      // The entry is written in one piece: once its id shows, its whole line is there.
      const lines = started.output().split('\n').filter((line) => line.includes('one-line-please'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/INFO \(mesh-zone\): request completed .*"method":"GET","url":"\/meshes\/default".*"statusCode":200/);
    } finally {
      await started.stop();
    }
  });
});

/**
 * A ready zone whose standard output and error are pipes this test reads until it closes them, as
 * a reader that exits does: at once (before the zone writes its banner) or once it is ready.
 */
async function zoneWithPipedOutput(closeOutput: 'at once' | 'when ready') {
  const env = await startEnv();
  const child = spawn(process.execPath, [BINARIES['mesh-zone']], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const close = () => {
    child.stdout.destroy();
    child.stderr.destroy();
  };
  if (closeOutput === 'at once') close();
  else {
    child.stdout.resume();
    child.stderr.resume();
  }
  for (let ready = false; !ready; ) {
    ready = await fetch(`http://127.0.0.1:${env.MESH_DIAGNOSTICS_SERVER_PORT}/ready`).then((res) => res.ok, () => false);
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (closeOutput === 'when ready') close();
  return { url: `http://127.0.0.1:${env.MESH_API_SERVER_HTTP_PORT}`, exited, child };
}

describe('a mesh-zone whose output nobody reads', () => {
  it('starts, serves and stops on SIGTERM when nobody reads it from the start', async () => {
    const zone = await zoneWithPipedOutput('at once');
    try {
      expect((await fetch(`${zone.url}/meshes/default`)).status).toBe(200);
      zone.child.kill('SIGTERM');
      expect(await zone.exited).toBe(0);
    } finally {
      zone.child.kill('SIGKILL');
    }
  }, 60_000);

  it('goes on serving once its reader has gone, then stops on SIGTERM', async () => {
    const zone = await zoneWithPipedOutput('when ready');
    try {
      // Each request logs a line that can no longer be written.
      for (let i = 0; i < 50; i++) expect((await fetch(`${zone.url}/meshes/default`)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await fetch(`${zone.url}/meshes/default`)).status).toBe(200);
      zone.child.kill('SIGTERM');
      expect(await zone.exited).toBe(0);
    } finally {
      zone.child.kill('SIGKILL');
    }
  }, 60_000);
});

describe('a running mesh-zone', () => {
  it('says where it is on stderr, and counts requests by route, store operations, resources by kind and proxies by status in /metrics', async () => {
    const cp = await startControlPlane();
    try {
      // The control plane's thread writes the banner once its servers listen, through the process's
      // stderr: it may reach us after /ready does.
      for (let i = 0; i < 250 && !cp.output().includes(' is running '); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(cp.output()).toMatch(/mesh-zone .* is running \(standalone\)/);
      expect(cp.output()).toContain(`API          ${cp.url}`);
      const metrics = async () => (await fetch(`http://127.0.0.1:${cp.ports.diagnostics}/metrics`)).text();
      const count = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
      const ROUTE_COUNT = /api_server_http_request_duration_seconds_count\{handler="\/meshes\/\{mesh\}\/traffic-routes\/\{name\}",method="PUT",code="201"\} (\d+)/;
      // The reference's store histogram: `store` by operation and resource type.
      const STORE_CREATES = /^store_count\{operation="create",resource_type="TrafficRoute"\} (\d+)$/m;
      const STORE_READS = /^store_count\{operation="get",resource_type="Mesh"\} (\d+)$/m;
      const before = await metrics();
      expect(before).toContain('process_resident_memory_bytes');
      expect(before).toContain('# TYPE store histogram');
      expect(before).toMatch(/resources_count\{resource_type="Mesh",mesh=""\} 1/);
      expect(before).toMatch(/dataplanes\{status="online"\} 0/);
      for (const name of ['a', 'b']) {
        const body = { type: 'TrafficRoute', mesh: 'default', name, sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }], conf: { destination: { 'mesh.io/service': '*' } } };
        await fetch(`${cp.url}/meshes/default/traffic-routes/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      }
      const after = await metrics();
      expect(count(after, ROUTE_COUNT) - count(before, ROUTE_COUNT)).toBe(2);
      expect(count(after, STORE_CREATES) - count(before, STORE_CREATES)).toBe(2);
      expect(after).toMatch(/^store_bucket\{le="\+Inf",operation="create",resource_type="TrafficRoute"\} \d+$/m);
      expect(after).toMatch(/^store_sum\{operation="create",resource_type="TrafficRoute"\} \d/m);
      expect(after).toMatch(/resources_count\{resource_type="TrafficRoute",mesh="default"\} 3/);
      expect(after).toMatch(/zones\{status="online"\} 0/);

      // One log line per request, carrying the caller's request id, which the answer echoes.
      const traced = await fetch(`${cp.url}/meshes/default`, { headers: { 'x-request-id': 'trace-123', authorization: 'Bearer not-logged' } });
      expect(traced.headers.get('x-request-id')).toBe('trace-123');
      // Reads are timed too.
      expect(count(await metrics(), STORE_READS)).toBeGreaterThan(count(after, STORE_READS));
      let line: string | undefined;
      for (let i = 0; i < 100 && !line; i++) {
        line = cp.output().split('\n').find((l) => l.includes('"trace-123"'));
        if (!line) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(JSON.parse(line!)).toMatchObject({ level: 30, req: { id: 'trace-123', method: 'GET', url: '/meshes/default' }, res: { statusCode: 200 } });
      expect(cp.output()).not.toContain('not-logged');
    } finally {
      await cp.stop();
    }
  }, 60_000);

  it.skipIf(process.platform !== 'linux')('names its threads for `top -H`: the control plane, the data plane transport and, once written to, the checkpoints', async () => {
    const cp = await startControlPlane();
    const threadNames = () =>
      readdirSync(`/proc/${cp.pid}/task`).flatMap((tid) => {
        try {
          return [{ tid, name: readFileSync(`/proc/${cp.pid}/task/${tid}/comm`, 'utf8').trim() }];
        } catch {
          return []; // a thread that ended meanwhile
        }
      });
    try {
      const body = { type: 'TrafficRoute', mesh: 'default', name: 'named', sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }], conf: { destination: { 'mesh.io/service': '*' } } };
      expect((await fetch(`${cp.url}/meshes/default/traffic-routes/named`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status).toBe(201);
      const wanted = ['control-plane', 'dp-transport', 'wal-checkpoint'];
      let names = threadNames().map((thread) => thread.name);
      for (let i = 0; i < 100 && !wanted.every((name) => names.includes(name)); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        names = threadNames().map((thread) => thread.name);
      }
      expect(names).toEqual(expect.arrayContaining(wanted));
      // One thread of each, and the process keeps its own name (its first thread's).
      for (const name of wanted) expect(names.filter((other) => other === name)).toHaveLength(1);
      const firstThread = threadNames().find((thread) => thread.tid === String(cp.pid))?.name;
      expect(firstThread).toBeDefined();
      expect(wanted).not.toContain(firstThread);
    } finally {
      await cp.stop();
    }
  }, 60_000);
});
