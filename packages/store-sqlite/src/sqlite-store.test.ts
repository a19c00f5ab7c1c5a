import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ResourceChange } from '@mesh/store';
import { describeResourceStore } from '@mesh/store/testing';
import { SqliteResourceStore } from './sqlite-store.js';

const dirs: string[] = [];
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-store-'));
  dirs.push(dir);
  return join(dir, 'mesh.db');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const route = (mesh: string, name: string, spec = '{}') => ({ type: 'TrafficRoute', mesh, name, spec });

describe('SqliteResourceStore', () => {
  it('creates, reads, updates with a version and deletes', async () => {
    let clock = new Date('2026-01-01T00:00:00.000Z');
    const store = new SqliteResourceStore({ path: ':memory:', now: () => clock });
    const created = await store.create(route('default', 'r1', '{"a":1}'));
    expect(created).toMatchObject({ version: 1, creationTime: '2026-01-01T00:00:00.000Z', modificationTime: '2026-01-01T00:00:00.000Z' });

    clock = new Date('2026-01-01T00:00:05.500Z');
    const updated = await store.update({ ...route('default', 'r1', '{"a":2}'), version: 1 });
    expect(updated).toMatchObject({ spec: '{"a":2}', version: 2, creationTime: '2026-01-01T00:00:00.000Z', modificationTime: '2026-01-01T00:00:05.500Z' });
    expect(await store.get({ type: 'TrafficRoute', mesh: 'default', name: 'r1' })).toEqual(updated);

    await store.delete({ type: 'TrafficRoute', mesh: 'default', name: 'r1' });
    expect(await store.get({ type: 'TrafficRoute', mesh: 'default', name: 'r1' })).toBeUndefined();
    await store.close();
  });

  it('refuses a duplicate create and a missing delete or update', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    await store.create(route('default', 'r1'));
    await expect(store.create(route('default', 'r1'))).rejects.toMatchObject({
      code: 'already_exists',
      message: 'resource already exists: type="TrafficRoute" name="r1" mesh="default"',
    });
    await expect(store.delete({ type: 'TrafficRoute', mesh: 'default', name: 'nope' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(store.update({ ...route('default', 'nope'), version: 1 })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('detects a concurrent update by version', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    await store.create(route('default', 'r1'));
    const [a, b] = await Promise.allSettled([
      store.update({ ...route('default', 'r1', '{"by":"a"}'), version: 1 }),
      store.update({ ...route('default', 'r1', '{"by":"b"}'), version: 1 }),
    ]);
    expect(a.status).toBe('fulfilled');
    expect(b).toMatchObject({ status: 'rejected', reason: { code: 'conflict', message: 'resource conflict: type="TrafficRoute" name="r1" mesh="default"' } });
    expect((await store.get({ type: 'TrafficRoute', mesh: 'default', name: 'r1' }))?.spec).toBe('{"by":"a"}');
  });

  it('pages through every item exactly once in (mesh, name) order', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    const names: string[] = [];
    for (let i = 0; i < 237; i++) names.push(`r-${String(i).padStart(3, '0')}`);
    await store.createMissing([...names].reverse().map((n) => route('m1', n)));
    await store.createMissing([route('m0', 'z'), route('m2', 'a')]);

    const seen: string[] = [];
    for (let offset = 0; ; offset += 50) {
      const page = await store.list({ type: 'TrafficRoute', mesh: 'm1', offset, size: 50 });
      expect(page.total).toBe(237);
      if (page.items.length === 0) break;
      seen.push(...page.items.map((r) => r.name));
    }
    expect(seen).toEqual(names);

    const all = await store.list({ type: 'TrafficRoute', offset: 0, size: 0 });
    expect(all.total).toBe(239);
    expect(all.items[0]).toMatchObject({ mesh: 'm0', name: 'z' });
    expect(all.items.at(-1)).toMatchObject({ mesh: 'm2', name: 'a' });
    expect(await store.count('TrafficRoute', 'm1')).toBe(237);
  });

  it('filters by name substring before paging', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    await store.createMissing(['web-1', 'web-2', 'api-1', 'web-3'].map((n) => route('default', n, JSON.stringify({ n }))));
    const page = await store.list({ type: 'TrafficRoute', mesh: 'default', nameContains: 'web', offset: 2, size: 1 });
    expect(page).toMatchObject({ total: 3, items: [{ name: 'web-3' }] });
  });

  it('deletes a mesh with everything it owns and announces each deletion', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    await store.create({ type: 'Mesh', mesh: '', name: 'm1', spec: '{}' });
    await store.create({ type: 'Mesh', mesh: '', name: 'm2', spec: '{}' });
    await store.createMissing([route('m1', 'a'), { type: 'Secret', mesh: 'm1', name: 's', spec: '{}' }, route('m2', 'b')]);
    const changes: ResourceChange[] = [];
    store.onChange((c) => changes.push(c));

    await store.deleteMesh('m1');
    expect(await store.count('TrafficRoute')).toBe(1);
    expect(await store.count('Secret')).toBe(0);
    expect(await store.count('Mesh')).toBe(1);
    expect(changes.map((c) => `${c.operation} ${c.type} ${c.mesh}/${c.name}`).sort()).toEqual([
      'delete Mesh /m1',
      'delete Secret m1/s',
      'delete TrafficRoute m1/a',
    ]);
    await expect(store.deleteMesh('m1')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('keeps its data when the file is reopened', async () => {
    const path = tempFile();
    const first = new SqliteResourceStore({ path });
    await first.create(route('default', 'kept', '{"x":1}'));
    await first.putSetting('clusterId', 'abc');
    await first.close();

    const second = new SqliteResourceStore({ path });
    expect(await second.get({ type: 'TrafficRoute', mesh: 'default', name: 'kept' })).toMatchObject({ spec: '{"x":1}', version: 1 });
    expect(await second.list({ type: 'TrafficRoute', offset: 0, size: 10 })).toMatchObject({ total: 1 });
    expect(await second.getSetting('clusterId')).toBe('abc');
    await second.close();
  });

  it('announces creates, updates and deletes', async () => {
    const store = new SqliteResourceStore({ path: ':memory:' });
    const changes: ResourceChange[] = [];
    const stop = store.onChange((c) => changes.push(c));
    await store.create(route('default', 'a'));
    await store.update({ ...route('default', 'a'), version: 1 });
    await store.delete({ type: 'TrafficRoute', mesh: 'default', name: 'a' });
    stop();
    await store.create(route('default', 'b'));
    expect(changes.map((c) => c.operation)).toEqual(['create', 'update', 'delete']);
  });
});

/** Transactions committed into the write-ahead log since its last reset: its frames that end one. */
function walCommits(databasePath: string): number {
  const wal = readFileSync(`${databasePath}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const salts = wal.subarray(16, 24);
  let commits = 0;
  for (let frame = 32; frame + 24 + pageSize <= wal.length; frame += 24 + pageSize) {
    // A frame of an earlier round of the log (before a checkpoint reset it) has other salts.
    if (!wal.subarray(frame + 8, frame + 16).equals(salts)) break;
    if (wal.readUInt32BE(frame + 4) !== 0) commits++;
  }
  return commits;
}

describe('SqliteResourceStore with writes asked together', () => {
  it('commits them in one SQLite transaction, and a write asked alone in its own', async () => {
    const path = tempFile();
    // Checkpoints by the writes themselves: one from the background thread could restart the log between two counts.
    const store = new SqliteResourceStore({ path, checkpoints: 'inline' });
    await store.create(route('default', 'first'));
    const before = walCommits(path);
    const created = await Promise.all(Array.from({ length: 16 }, (_, i) => store.create(route('default', `r-${i}`))));
    expect(created.map((r) => r.name)).toEqual(Array.from({ length: 16 }, (_, i) => `r-${i}`));
    expect(walCommits(path) - before).toBe(1);
    await store.create(route('default', 'last'));
    expect(walCommits(path) - before).toBe(2);
    expect(await store.count('TrafficRoute')).toBe(18);
    await store.close();
  });
});

describe('SqliteResourceStore on a file it cannot use', () => {
  it('refuses a file that is no database, naming it', () => {
    const path = tempFile();
    writeFileSync(path, 'not a database at all, but long enough to have a header of sorts...'.repeat(20));
    expect(() => new SqliteResourceStore({ path })).toThrow(`database ${path} is not a SQLite database or is corrupt (file is not a database): restore a backup, or move the file away to start afresh`);
  });

  it('refuses a corrupt database, naming it', async () => {
    const path = tempFile();
    const store = new SqliteResourceStore({ path });
    for (let i = 0; i < 200; i++) await store.create(route('default', `r${i}`, JSON.stringify({ padding: 'x'.repeat(500) })));
    await store.close();
    // The pages past the first are overwritten with noise.
    const bytes = readFileSync(path);
    for (let at = 4096; at < bytes.length; at++) bytes[at] = (at * 7919) % 251;
    writeFileSync(path, bytes);
    expect(() => new SqliteResourceStore({ path })).toThrow(/^database .* is not a SQLite database or is corrupt \(database disk image is malformed\)/);
  });

  it('refuses a database written by a newer version, one with a migration this build does not know', async () => {
    const path = tempFile();
    await new SqliteResourceStore({ path }).close();
    const raw = new Database(path);
    raw.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('from-the-future', Date.parse('2099-01-01T00:00:00.000Z'));
    raw.close();
    expect(() => new SqliteResourceStore({ path })).toThrow(
      `database ${path} was written by a newer version of the control plane (schema migrations unknown to this build (created at 2099-01-01T00:00:00.000Z)): run that version, or restore a backup`,
    );
  });

  it('refuses a file in a directory that does not exist', () => {
    const path = join(tempFile(), 'nowhere', 'mesh.db');
    expect(() => new SqliteResourceStore({ path })).toThrow(`database ${path} cannot be used: Cannot open database because the directory does not exist`);
  });

  it('answers writes on a full file with unavailable, keeps serving reads, and writes again once there is room', async () => {
    const path = tempFile();
    const store = new SqliteResourceStore({ path, maxSizeBytes: 256 * 1024 });
    const big = (i: number) => route('default', `r${i}`, JSON.stringify({ padding: 'x'.repeat(8000), i }));
    let written = 0;
    let refusal: unknown;
    for (; written < 1000; written++) {
      try {
        await store.create(big(written));
      } catch (error) {
        refusal = error;
        break;
      }
    }
    expect(refusal).toMatchObject({ code: 'unavailable', message: expect.stringContaining('the disk is full (SQLITE_FULL)') });
    const revision = await store.currentRevision();
    expect([revision, (await store.list({ type: 'TrafficRoute', offset: 0, size: 0 })).total]).toEqual([written, written]);
    await expect(store.update({ ...big(0), spec: JSON.stringify({ padding: 'y'.repeat(60_000) }), version: 1 })).rejects.toMatchObject({ code: 'unavailable' });
    await expect(store.putSetting('big', 'z'.repeat(60_000))).rejects.toMatchObject({ code: 'unavailable' });
    expect(JSON.parse((await store.get({ type: 'TrafficRoute', mesh: 'default', name: 'r0' }))!.spec).i).toBe(0);
    // Room again: the next write goes through, numbered right after the last one that did.
    for (let i = 1; i <= 5; i++) await store.delete({ type: 'TrafficRoute', mesh: 'default', name: `r${i}` });
    await store.create(big(written));
    expect(await store.currentRevision()).toBe(revision + 6);
    await store.close();
    const reopened = new SqliteResourceStore({ path });
    expect((await reopened.list({ type: 'TrafficRoute', offset: 0, size: 0 })).total).toBe(written - 4);
    const log = await reopened.changesSince(0, 10_000);
    expect(log.resync ? [] : log.changes.map((c) => c.revision)).toEqual(Array.from({ length: revision + 6 }, (_, i) => i + 1));
    await reopened.close();
  });
});

describe('SqliteResourceStore whose file goes away while open', () => {
  const removeDatabase = (path: string) => {
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
  };

  /** A store on a file with one route written, and what it reported about its file. */
  async function openWithRoute() {
    const path = tempFile();
    const lost: string[] = [];
    const store = new SqliteResourceStore({ path, onFileLost: (what) => lost.push(what) });
    await store.create(route('default', 'before', '{"kept":true}'));
    return { path, lost, store };
  }

  /** Every kind of write is refused with `message`; reads are served as before. */
  async function expectWritesRefusedReadsServed(store: SqliteResourceStore, message: string) {
    const refused = { code: 'unavailable', title: 'Service Unavailable', message: expect.stringContaining(message) };
    await expect(store.create(route('default', 'after'))).rejects.toMatchObject(refused);
    await expect(store.update({ ...route('default', 'before', '{"kept":false}'), version: 1 })).rejects.toMatchObject(refused);
    await expect(store.delete({ type: 'TrafficRoute', mesh: 'default', name: 'before' })).rejects.toMatchObject(refused);
    await expect(store.writeBatch([{ operation: 'upsert', resource: route('default', 'batched') }])).rejects.toMatchObject(refused);
    await expect(store.putSetting('key', 'value')).rejects.toMatchObject(refused);
    expect(await store.get({ type: 'TrafficRoute', mesh: 'default', name: 'before' })).toMatchObject({ spec: '{"kept":true}', version: 1 });
    expect(await store.list({ type: 'TrafficRoute', offset: 0, size: 0 })).toMatchObject({ total: 1, items: [{ name: 'before' }] });
    expect(await store.currentRevision()).toBe(1);
    expect(store.available).toBe(false);
  }

  it('refuses every write once the file is removed, naming it, says so once, and serves reads', async () => {
    const { path, lost, store } = await openWithRoute();
    removeDatabase(path);
    await expectWritesRefusedReadsServed(store, `database ${path} was removed while open`);
    expect(lost).toEqual([`database ${path} was removed while open`]);
    await store.close();
  });

  it('refuses every write once another file takes its path', async () => {
    const { path, lost, store } = await openWithRoute();
    const other = join(dirname(path), 'other.db');
    await new SqliteResourceStore({ path: other }).close();
    renameSync(other, path);
    await expectWritesRefusedReadsServed(store, `database ${path} was replaced by another file while open`);
    expect(lost).toEqual([`database ${path} was replaced by another file while open`]);
    await store.close();
  });

  it('notices a removed file without a write coming', async () => {
    const { path, lost, store } = await openWithRoute();
    expect(store.available).toBe(true);
    removeDatabase(path);
    await vi.waitFor(() => expect(lost).toEqual([`database ${path} was removed while open`]), { timeout: 30_000, interval: 50 });
    expect(store.available).toBe(false);
    await store.close();
  }, 60_000);

  it('keeps writing while its path names the file it opened', async () => {
    const { path, lost, store } = await openWithRoute();
    await store.create(route('default', 'after'));
    expect([store.available, lost, await store.count('TrafficRoute')]).toEqual([true, [], 2]);
    await store.close();
    const reopened = new SqliteResourceStore({ path });
    expect(await reopened.count('TrafficRoute')).toBe(2);
    await reopened.close();
  });
});

describeResourceStore({ describe, it, expect }, 'SqliteResourceStore', (options = {}) => {
  const path = tempFile();
  return Promise.resolve({ store: new SqliteResourceStore({ path, ...options }), reopen: () => Promise.resolve(new SqliteResourceStore({ path })) });
});

describe('SqliteResourceStore checkpoints', () => {
  /** The TrafficRoutes the database file holds by itself, without its write-ahead log. */
  const routesInFileAlone = (path: string): number => {
    const copy = `${path}-alone`;
    writeFileSync(copy, readFileSync(path));
    const db = new Database(copy);
    try {
      // The tables themselves may still be in the log only.
      if (!db.prepare("SELECT name FROM sqlite_master WHERE name = 'resources'").get()) return 0;
      return (db.prepare("SELECT count(*) AS n FROM resources WHERE type = 'TrafficRoute'").get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  const until = async (condition: () => boolean) => {
    const deadline = Date.now() + 30_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('not reached in 30 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('copies the log back into the file from a thread of their own, and the close removes the log', async () => {
    const path = tempFile();
    const store = new SqliteResourceStore({ path });
    for (let i = 0; i < 20; i++) await store.create(route('default', `r-${i}`));
    await until(() => routesInFileAlone(path) === 20);
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = new SqliteResourceStore({ path });
    expect(await reopened.count('TrafficRoute')).toBe(20);
    await reopened.close();
  });

  it('are left to the writes themselves when asked: a few writes stay in the log', async () => {
    const path = tempFile();
    const store = new SqliteResourceStore({ path, checkpoints: 'inline' });
    for (let i = 0; i < 20; i++) await store.create(route('default', `r-${i}`));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(routesInFileAlone(path)).toBe(0);
    await store.close();
  });
});
