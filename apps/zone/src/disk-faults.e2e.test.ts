// End to end: disk and database faults with the built zone binary. A work directory it cannot
// write, a database file that is corrupt or no database, a database a newer version wrote: the
// process refuses to start, exits non-zero and says why in one log line. A disk that fills up
// while writing: writes answer 503 with the standard error body, reads go on, nothing
// acknowledged is lost, and writes work again once there is room. The disk is a small tmpfs where
// this machine lets the test mount one; the database's own size cap (`store.sqlite.maxSize`)
// fills up the same way everywhere. A database file removed or replaced while the process runs:
// writes answer 503 naming the file, readiness fails, reads go on, and one log line says what
// happened.
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { BINARIES, freePort, startControlPlane, type ControlPlaneProcess, type Ports } from './testing/process.js';
import { sendRaw, standardErrorProblem } from './testing/raw-http.js';

type Started = ControlPlaneProcess & { ports: Ports };

/** The SQLite driver the store is built on, to write into a database as another version would. */
type SqliteDriver = new (path: string) => { prepare(sql: string): { run(...values: unknown[]): unknown }; close(): void };
const storePackage = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'packages', 'store-sqlite', 'package.json');
const Database = createRequire(storePackage)('better-sqlite3') as SqliteDriver;

const started: Started[] = [];
const mounts: string[] = [];
const json = { 'content-type': 'application/json' };
const ALL = [{ match: { 'mesh.io/service': '*' } }];

afterAll(async () => {
  await Promise.all(started.map((cp) => cp.stop('SIGKILL')));
  for (const dir of mounts) execFileSync('umount', [dir]);
});

/** Mounts a tmpfs of `options` on a new directory, or says why it cannot (not root, no mount). */
function mountTmpfs(options: string): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  mounts.push(dir);
  return dir;
}

/** Runs the binary until it exits; its exit status and its log lines. */
async function runUntilExit(env: Record<string, string>): Promise<{ code: number | null; lines: Array<{ level: number; msg: string }> }> {
  const ports = { http: await freePort(), https: await freePort(), diagnostics: await freePort(), kds: await freePort() };
  const child = spawn(process.execPath, [BINARIES['mesh-zone']], {
    env: {
      PATH: process.env.PATH ?? '',
      MESH_API_SERVER_HTTP_PORT: String(ports.http),
      MESH_API_SERVER_HTTPS_PORT: String(ports.https),
      MESH_DIAGNOSTICS_SERVER_PORT: String(ports.diagnostics),
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: String(ports.kds),
      MESH_DP_SERVER_PORT: '0',
      MESH_MONITORING_ASSIGNMENT_SERVER_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (status) => {
      clearTimeout(timer);
      resolve(status);
    });
  });
  const lines = output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });
  return { code, lines };
}

/** It refused to start: a non-zero status and one error line, the fatal one, saying `why`. */
function expectRefusedStart(result: Awaited<ReturnType<typeof runUntilExit>>, why: RegExp): void {
  expect(result.code, JSON.stringify(result.lines)).not.toBe(0);
  expect(result.code).not.toBeNull();
  const errors = result.lines.filter((line) => line.level >= 50);
  expect(errors, JSON.stringify(result.lines)).toHaveLength(1);
  expect(errors[0]).toMatchObject({ level: 60, msg: expect.stringMatching(why) });
}

describe('refusing to start', () => {
  it('on a work directory it cannot write', async () => {
    const readOnly = mountTmpfs('ro,size=1m');
    let workDir: string;
    if (readOnly) workDir = join(readOnly, 'data', 'mesh');
    else {
      // Without a read-only mount, permissions do it (for a user that is not root).
      workDir = mkdtempSync(join(tmpdir(), 'mesh-ro-'));
      chmodSync(workDir, 0o500);
    }
    expectRefusedStart(await runUntilExit({ MESH_GENERAL_WORK_DIR: workDir }), new RegExp(`^work directory ${workDir} cannot be created or written \\((EROFS|EACCES)\\)`));
  });

  it('on a database file that is no database, or is corrupt', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'mesh-corrupt-'));
    const cp = await startControlPlane({ workDir });
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${cp.url}/meshes/default/traffic-routes/r-${i}`, {
        method: 'PUT',
        headers: json,
        body: JSON.stringify({ type: 'TrafficRoute', mesh: 'default', name: `r-${i}`, labels: { padding: 'x'.repeat(60) }, sources: ALL, destinations: ALL, conf: { destination: { 'mesh.io/service': `s-${i}` } } }),
      });
      expect(res.status).toBe(201);
    }
    expect(await cp.stop()).toBe(0);
    const path = join(workDir, 'mesh.db');
    const bytes = readFileSync(path);
    for (let at = 4096; at < bytes.length; at++) bytes[at] = (at * 7919) % 251;
    const corrupt = openSync(path, 'w');
    writeSync(corrupt, bytes);
    closeSync(corrupt);
    expectRefusedStart(await runUntilExit({ MESH_GENERAL_WORK_DIR: workDir }), new RegExp(`^database ${path} is not a SQLite database or is corrupt \\(database disk image is malformed\\)`));

    const other = mkdtempSync(join(tmpdir(), 'mesh-notadb-'));
    const garbage = openSync(join(other, 'mesh.db'), 'w');
    writeSync(garbage, 'this is a text file, not a database '.repeat(200));
    closeSync(garbage);
    expectRefusedStart(await runUntilExit({ MESH_GENERAL_WORK_DIR: other }), new RegExp(`^database ${join(other, 'mesh.db')} is not a SQLite database or is corrupt \\(file is not a database\\)`));
  });

  it('on a database a newer version wrote (a migration this build does not know)', async () => {
    const cp = await startControlPlane();
    expect(await cp.stop()).toBe(0);
    const path = join(cp.workDir, 'mesh.db');
    const db = new Database(path);
    db.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('from-a-newer-version', Date.parse('2099-01-01T00:00:00.000Z'));
    db.close();
    expectRefusedStart(await runUntilExit({ MESH_GENERAL_WORK_DIR: cp.workDir }), new RegExp(`^database ${path} was written by a newer version of the control plane`));
  });
});

describe('a disk that fills up while writing', () => {
  const route = (name: string) => ({
    type: 'TrafficRoute',
    mesh: 'default',
    name,
    sources: ALL,
    destinations: ALL,
    conf: { destination: { 'mesh.io/service': `${name}-${'x'.repeat(3000)}` } },
  });
  const put = (cp: Started, name: string) => sendRaw(cp.url, { method: 'PUT', path: `/meshes/default/traffic-routes/${name}`, headers: json, body: JSON.stringify(route(name)) });

  /**
   * Writes until the store refuses; every refusal is a 503 with the standard body while reads go
   * on. Returns the names acknowledged and the first one refused.
   */
  async function writeUntilFull(cp: Started): Promise<{ acknowledged: string[]; refused: string }> {
    const acknowledged: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const name = `fill-${i}`;
      const reply = await put(cp, name);
      if (reply.status === 201) {
        acknowledged.push(name);
        continue;
      }
      expect(reply.status, reply.text).toBe(503);
      expect(standardErrorProblem(reply)).toBeUndefined();
      expect(JSON.parse(reply.text)).toMatchObject({ title: 'Service Unavailable', detail: expect.stringContaining('the disk is full') });
      // Reads go on, and what was acknowledged is there.
      const listed = await sendRaw(cp.url, { method: 'GET', path: '/meshes/default/traffic-routes?size=0' });
      expect(listed.status).toBe(200);
      const names = new Set((JSON.parse(listed.text) as { items: Array<{ name: string }> }).items.map((r) => r.name));
      expect(acknowledged.filter((acked) => !names.has(acked))).toEqual([]);
      expect(names.has(name)).toBe(false);
      expect((await sendRaw(cp.url, { method: 'GET', path: '/meshes/default/traffic-routes/route-all-default' })).status).toBe(200);
      return { acknowledged, refused: name };
    }
    throw new Error('the disk never filled up');
  }

  /** After a restart, every acknowledged write is there. */
  async function expectKept(cp: Started, acknowledged: string[]): Promise<void> {
    await cp.stop('SIGKILL');
    const again = await startControlPlane({ workDir: cp.workDir, ports: cp.ports, env: cp.env });
    started.push(again);
    const stored = new Set(((await (await fetch(`${again.url}/meshes/default/traffic-routes?size=0`)).json()) as { items: Array<{ name: string }> }).items.map((r) => r.name));
    expect(acknowledged.filter((name) => !stored.has(name))).toEqual([]);
  }

  it('on a small tmpfs: 503 for writes, reads go on, writes again once there is room, nothing lost', async (context) => {
    const disk = mountTmpfs('size=6m');
    if (!disk) {
      context.skip('no tmpfs can be mounted here (needs root); the size cap below fills up the same way');
      return;
    }
    const workDir = join(disk, 'data');
    mkdirSync(workDir);
    const cp = await startControlPlane({ workDir });
    started.push(cp);
    // Ballast fills what is left of the disk.
    const ballast = join(disk, 'ballast');
    const fd = openSync(ballast, 'w');
    try {
      for (;;) writeSync(fd, Buffer.alloc(16 * 1024));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      closeSync(fd);
    }
    // A little room is left, so that some writes are acknowledged before the disk is full.
    truncateSync(ballast, statSync(ballast).size - 256 * 1024);
    const { acknowledged, refused } = await writeUntilFull(cp);
    expect(acknowledged.length).toBeGreaterThan(0);
    rmSync(ballast);
    expect((await put(cp, refused)).status).toBe(201);
    await expectKept(cp, [...acknowledged, refused]);
  }, 120_000);

  it('under the database size cap: the same', async () => {
    const cp = await startControlPlane({ env: { MESH_STORE_SQLITE_MAX_SIZE: String(1024 * 1024) } });
    started.push(cp);
    const { acknowledged, refused } = await writeUntilFull(cp);
    expect(acknowledged.length).toBeGreaterThan(0);
    // Room again: deleting frees pages inside the file.
    for (const name of acknowledged.splice(0, 20)) expect((await sendRaw(cp.url, { method: 'DELETE', path: `/meshes/default/traffic-routes/${name}` })).status).toBe(200);
    expect((await put(cp, refused)).status).toBe(201);
    await expectKept(cp, [...acknowledged, refused]);
  }, 120_000);
});

describe('a database file that goes away while the process runs', () => {
  const route = (name: string) => ({ type: 'TrafficRoute', mesh: 'default', name, sources: ALL, destinations: ALL, conf: { destination: { 'mesh.io/service': name } } });
  const put = (cp: Started, name: string) => sendRaw(cp.url, { method: 'PUT', path: `/meshes/default/traffic-routes/${name}`, headers: json, body: JSON.stringify(route(name)) });

  /** Writes answer 503 naming what happened to the file, readiness fails, reads go on, and one log line says it. */
  async function expectWritesStopped(cp: Started, what: string): Promise<void> {
    for (const name of ['after', 'before']) {
      const refused = await put(cp, name);
      expect(refused.status, refused.text).toBe(503);
      expect(standardErrorProblem(refused)).toBeUndefined();
      expect(JSON.parse(refused.text)).toMatchObject({ title: 'Service Unavailable', detail: expect.stringContaining(what) });
    }
    const deleted = await sendRaw(cp.url, { method: 'DELETE', path: '/meshes/default/traffic-routes/before' });
    expect(deleted.status, deleted.text).toBe(503);
    expect((await fetch(`http://127.0.0.1:${cp.ports.diagnostics}/ready`)).status).toBe(503);
    const read = await sendRaw(cp.url, { method: 'GET', path: '/meshes/default/traffic-routes/before' });
    expect(read.status).toBe(200);
    expect(JSON.parse(read.text)).toMatchObject({ name: 'before' });
    expect((await sendRaw(cp.url, { method: 'GET', path: '/meshes/default/traffic-routes/after' })).status).toBe(404);
    // Once more writes were refused and their lines are out, the line about the file is still the only other error line.
    for (let i = 0; i < 3; i++) expect((await put(cp, `again-${i}`)).status).toBe(503);
    const logged = () =>
      cp
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((line) => line.level >= 50);
    await vi.waitFor(() => expect(logged().filter((line) => line.msg === 'request errored')).toHaveLength(6), { timeout: 30_000, interval: 100 });
    const others = logged().filter((line) => line.msg !== 'request errored');
    expect(others).toHaveLength(1);
    expect(others[0]).toMatchObject({ level: 50, msg: expect.stringContaining(`${what}: from now on writes answer 503 and /ready fails`) });
  }

  it('removed: writes answer 503 naming it, /ready fails, reads go on, one error line', async () => {
    const cp = await startControlPlane();
    started.push(cp);
    expect((await put(cp, 'before')).status).toBe(201);
    const path = join(cp.workDir, 'mesh.db');
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file);
    await expectWritesStopped(cp, `database ${path} was removed while open`);
  }, 60_000);

  it('replaced by another database: the same', async () => {
    const cp = await startControlPlane();
    started.push(cp);
    expect((await put(cp, 'before')).status).toBe(201);
    const path = join(cp.workDir, 'mesh.db');
    const other = join(cp.workDir, 'other.db');
    new Database(other).close();
    renameSync(other, path);
    await expectWritesStopped(cp, `database ${path} was replaced by another file while open`);
  }, 60_000);
});
