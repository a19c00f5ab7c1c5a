// The PostgreSQL store against a real server started for these tests. Without the server
// binaries the tests are skipped outside CI; CI installs them (.ci/run), so there they run.
import { describeResourceStore } from '@mesh/store/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresResourceStore, type PostgresStoreOptions } from './postgres-store.js';
import { findPostgresBinaries, startPostgresServer, type PostgresServer } from './testing/index.js';

const available = findPostgresBinaries() !== undefined;
if (!available && process.env.CI) throw new Error('PostgreSQL server binaries are required in CI (.ci/run installs them)');

const waitFor = async (condition: () => Promise<boolean> | boolean, what: string) => {
  for (let i = 0; i < 200; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe.skipIf(!available)('PostgresResourceStore', () => {
  let server: PostgresServer;
  const opened: PostgresResourceStore[] = [];
  beforeAll(async () => {
    server = await startPostgresServer();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
    await server?.stop();
  }, 60_000);

  async function open(database?: string, extra: Partial<PostgresStoreOptions> = {}) {
    const name = database ?? (await server.createDatabase());
    const store = await PostgresResourceStore.open({ host: server.host, port: server.port, user: server.user, database: name, ...extra });
    opened.push(store);
    return { store, database: name };
  }

  const route = (name: string, spec = '{"conf":{}}') => ({ type: 'TrafficRoute', mesh: 'default', name, spec });

  it('creates, reads, updates with optimistic concurrency and deletes', async () => {
    const { store } = await open();
    const created = await store.create({ ...route('a'), labels: { team: 'x' } });
    expect(created).toMatchObject({ version: 1, labels: { team: 'x' }, spec: '{"conf":{}}' });
    await expect(store.create(route('a'))).rejects.toMatchObject({ code: 'already_exists' });
    const updated = await store.update({ ...route('a', '{"conf":{"x":1}}'), version: 1 });
    expect(updated).toMatchObject({ version: 2, spec: '{"conf":{"x":1}}', creationTime: created.creationTime });
    await expect(store.update({ ...route('a'), version: 1 })).rejects.toMatchObject({ code: 'conflict' });
    await expect(store.update({ ...route('missing'), version: 1 })).rejects.toMatchObject({ code: 'not_found' });
    expect((await store.list({ type: 'TrafficRoute', offset: 0, size: 0 })).total).toBe(1);
    await store.delete(route('a'));
    await expect(store.delete(route('a'))).rejects.toMatchObject({ code: 'not_found' });
    expect(await store.get(route('a'))).toBeUndefined();
  });

  it('numbers every change with a store-wide revision, kept across a reopen', async () => {
    const { store, database } = await open();
    const seen: number[] = [];
    store.onChange((change) => seen.push(change.revision));
    await store.create(route('a'));
    await store.createMissing([route('b'), route('a'), route('c')]);
    await store.create({ type: 'Mesh', mesh: '', name: 'default', spec: '{}' });
    await store.deleteMesh('default');
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    await store.close();
    const reopened = (await open(database)).store;
    expect(await reopened.currentRevision()).toBe(8);
    const since = await reopened.changesSince(5);
    expect(since).toMatchObject({ resync: false, revision: 8 });
    expect(since.resync === false && since.changes.map((c) => [c.revision, c.operation, c.name])).toEqual([
      [6, 'delete', 'a'],
      [7, 'delete', 'b'],
      [8, 'delete', 'c'],
    ]);
    await reopened.create(route('d'));
    expect(await reopened.currentRevision()).toBe(9);
  });

  it('writes a batch all or nothing', async () => {
    const { store } = await open();
    await store.create(route('a'));
    const changes = await store.writeBatch([
      { operation: 'upsert', resource: route('a', '{"conf":{"y":2}}') },
      { operation: 'upsert', resource: route('b') },
      { operation: 'delete', key: { type: 'TrafficRoute', mesh: 'default', name: 'missing' } },
    ]);
    expect(changes.map((c) => [c.revision, c.operation, c.name])).toEqual([
      [2, 'update', 'a'],
      [3, 'create', 'b'],
    ]);
    await expect(store.writeBatch([{ operation: 'upsert', resource: route('c') }, { operation: 'upsert', resource: { ...route('d'), spec: null as unknown as string } }])).rejects.toThrow();
    expect(await store.get(route('c'))).toBeUndefined();
    expect(await store.currentRevision()).toBe(3);
    // The refused batch left no gap: the next change is revision 4, and resuming from 3 needs no resync.
    await store.create(route('e'));
    expect(await store.changesSince(3)).toMatchObject({ resync: false, changes: [{ revision: 4, name: 'e' }] });
  });

  it('lets several instances share one database: writes, change events and conflicts cross instances', async () => {
    const first = await open();
    const second = (await open(first.database)).store;
    const events: string[] = [];
    second.onChange((change) => events.push(`${change.operation} ${change.name}`));
    await first.store.create(route('shared'));
    await waitFor(async () => (await second.get(route('shared'))) !== undefined, 'the write to reach the second instance');
    expect(events).toEqual(['create shared']);
    await second.update({ ...route('shared', '{"conf":{"z":3}}'), version: 1 });
    await expect(first.store.update({ ...route('shared'), version: 1 })).rejects.toMatchObject({ code: 'conflict' });
    await waitFor(async () => (await first.store.get(route('shared')))?.version === 2, 'the update to reach the first instance');
    expect(await first.store.currentRevision()).toBe(await second.currentRevision());
  });

  it('announces what another instance committed before its own next write, then that write, in revision order', async () => {
    const first = await open();
    const second = (await open(first.database)).store;
    const events: string[] = [];
    second.onChange((change) => events.push(`${change.revision} ${change.operation} ${change.name}`));
    await first.store.create(route('theirs'));
    await first.store.update({ ...route('theirs', '{"conf":{"z":1}}'), version: 1 });
    // Whether or not the second instance has read them yet, they come before its own write.
    const mine = await second.create(route('mine'));
    expect(mine).toMatchObject({ name: 'mine', version: 1 });
    await waitFor(() => events.length === 3, 'the three changes to be announced');
    expect(events).toEqual(['1 create theirs', '2 update theirs', '3 create mine']);
    expect([await second.currentRevision(), (await second.get(route('theirs')))?.version]).toEqual([3, 2]);
    await waitFor(async () => (await first.store.get(route('mine'))) !== undefined, 'the second instance\'s write to reach the first');
  });

  it('tells a consumer from before the kept change log to read everything again', async () => {
    const { store } = await open(undefined, { retainedChanges: 10 });
    await store.createMissing(Array.from({ length: 1011 }, (_, i) => route(`r-${i}`)));
    await store.create(route('last'));
    expect(await store.changesSince(0)).toMatchObject({ resync: true });
    const recent = await store.changesSince((await store.currentRevision()) - 1);
    expect(recent).toMatchObject({ resync: false, changes: [{ name: 'last' }] });
  });

  it('refuses a database written by a newer version, one with a migration this build does not know', async () => {
    const { store, database } = await open();
    await store.close();
    const client = new pg.Client({ host: server.host, port: server.port, user: server.user, database });
    await client.connect();
    await client.query('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', ['from-the-future', Date.parse('2099-01-01T00:00:00.000Z')]);
    await client.end();
    await expect(PostgresResourceStore.open({ host: server.host, port: server.port, user: server.user, database })).rejects.toThrow(
      `database ${database} was written by a newer version of the control plane (schema migrations unknown to this build, created at 2099-01-01T00:00:00.000Z): run that version, or restore a backup`,
    );
  });
});

describe.skipIf(!available)('PostgresLeaderElection', () => {
  it('elects one leader among instances and hands over when the leader goes', async () => {
    const { PostgresLeaderElection } = await import('./leader.js');
    const server = await startPostgresServer();
    try {
      const connection = { host: server.host, port: server.port, user: server.user, database: await server.createDatabase() };
      const changes: string[] = [];
      const first = new PostgresLeaderElection({ connection, intervalMs: 50, onChange: (leader) => changes.push(`first ${leader}`) });
      const second = new PostgresLeaderElection({ connection, intervalMs: 50, onChange: (leader) => changes.push(`second ${leader}`) });
      first.start();
      await waitFor(() => first.isLeader, 'the first instance to lead');
      second.start();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect([first.isLeader, second.isLeader]).toEqual([true, false]);
      await first.stop();
      await waitFor(() => second.isLeader, 'the second instance to take over');
      expect(changes).toEqual(['first true', 'first false', 'second true']);
      await second.stop();
    } finally {
      await server.stop();
    }
  }, 60_000);
});

describe.skipIf(!available)('the shared store suite on PostgreSQL', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgresServer();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  }, 60_000);
  describeResourceStore({ describe, it, expect }, 'PostgresResourceStore', async (options = {}) => {
    // Sorting text by a language's rules, as a server set up with such a locale does.
    const database = await server.createDatabase({ icuLocale: 'en-US' });
    const connect = (extra: object) => PostgresResourceStore.open({ host: server.host, port: server.port, user: server.user, database, ...extra });
    return { store: await connect(options), reopen: () => connect({}) };
  });
});
