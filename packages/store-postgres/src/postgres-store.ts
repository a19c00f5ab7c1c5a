import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { DomainError, meshKind, resourceAlreadyExists, resourceConflict, resourceNotFound, storeUnavailable } from '@mesh/model';
import {
  ResourceIndex,
  type BatchOptions,
  type BatchWrite,
  type ChangeListener,
  type ChangesSince,
  type ListPage,
  type ListQuery,
  type NewResource,
  type ResourceChange,
  type ResourceKey,
  type ResourceStore,
  type ResourceUpdate,
  type StoredResource,
} from '@mesh/store';
import { drizzle } from 'drizzle-orm/node-postgres';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';

const MIGRATIONS = fileURLToPath(new URL('../drizzle', import.meta.url));

/** The channel every instance listens on; the payload is the revision just committed. */
const CHANNEL = 'mesh_changes';
/** Writers hold this transaction lock, so revisions commit in the order they are numbered. */
const WRITE_LOCK = 0x6d657368;
const PRUNED_THROUGH = 'changes.prunedThrough';
const PRUNE_STEP = 1000;

export interface PostgresStoreOptions {
  host: string;
  port: number;
  user: string;
  password?: string;
  database: string;
  /** Seconds to wait for a connection; 0 waits forever. */
  connectionTimeoutSeconds?: number;
  maxOpenConnections?: number;
  ssl?: pg.ClientConfig['ssl'];
  /** Change-log rows kept; a consumer that asks from before them reads everything again. */
  retainedChanges?: number;
  /** Source of timestamps; tests pin it. */
  now?: () => Date;
  /** Bounds of the wait between attempts to follow the change log again after the database was lost. */
  minReconnectIntervalMs?: number;
  maxReconnectIntervalMs?: number;
  /** The connection that follows the change log was lost or came back. */
  onAvailabilityChange?: (available: boolean) => void;
}


type Row = {
  type: string;
  mesh: string;
  name: string;
  spec: string;
  version: number;
  creation_time: string;
  modification_time: string;
  labels: string;
};

const toResource = (row: Row): StoredResource =>
  Object.freeze({
    type: row.type,
    mesh: row.mesh,
    name: row.name,
    spec: row.spec,
    version: row.version,
    creationTime: row.creation_time,
    modificationTime: row.modification_time,
    labels: Object.freeze(row.labels === '{}' ? {} : (JSON.parse(row.labels) as Record<string, string>)),
  });

const keyOf = (key: ResourceKey): ResourceKey => ({ type: key.type, mesh: key.mesh, name: key.name });

type Transaction = pg.PoolClient;

/**
 * The server store: several control-plane instances share one PostgreSQL database. Each keeps
 * every resource in memory (as the embedded store does) and follows the change log: a write
 * commits with a revision and a notification, and every instance (the writer included) reads
 * the log from its last revision, refreshes what changed and announces it, in revision order.
 */
export class PostgresResourceStore implements ResourceStore {
  private readonly events = new EventEmitter();
  private readonly index = new ResourceIndex();
  private readonly now: () => Date;
  private readonly retainedChanges: number;
  private listener: pg.Client | undefined;
  private applied = 0;
  /** The change-log revision through which rows were last pruned, as far as this instance knows. */
  private prunedThrough = 0;
  /** The revision of the last change the current write transaction recorded. */
  private lastRecorded = 0;
  private catchingUp: Promise<void> = Promise.resolve();
  private closed = false;
  private following = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: PostgresStoreOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.retainedChanges = options.retainedChanges ?? 100_000;
    this.events.setMaxListeners(0);
  }

  /** Connects, applies migrations, loads every resource and starts following the change log. */
  static async open(options: PostgresStoreOptions): Promise<PostgresResourceStore> {
    const config = connectionConfig(options);
    const pool = new pg.Pool({ ...config, max: options.maxOpenConnections || 10 });
    // An idle connection dropped by the server must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    const store = new PostgresResourceStore(pool, options);
    try {
      await store.migrate();
      await store.listen(config);
      await store.loadAll();
      return store;
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  async get(key: ResourceKey): Promise<StoredResource | undefined> {
    return this.index.get(key);
  }

  async getMany(keys: readonly ResourceKey[]): Promise<Array<StoredResource | undefined>> {
    return keys.map((key) => this.index.get(key));
  }

  async list(query: ListQuery): Promise<ListPage> {
    return this.index.list(query);
  }

  async count(type: string, mesh?: string): Promise<number> {
    return this.index.count(type, mesh);
  }

  async create(resource: NewResource, owned: readonly NewResource[] = []): Promise<StoredResource> {
    await this.write(async (tx) => {
      const time = this.timestamp();
      const inserted = await this.insert(tx, resource, time);
      if (!inserted) throw resourceAlreadyExists(resource.type, resource.name, resource.mesh);
      for (const along of owned) await this.insert(tx, along, time);
    });
    return (await this.get(resource))!;
  }

  async createMissing(list: NewResource[]): Promise<StoredResource[]> {
    const created: ResourceKey[] = [];
    await this.write(async (tx) => {
      const time = this.timestamp();
      for (const resource of list) if (await this.insert(tx, resource, time)) created.push(keyOf(resource));
    });
    return Promise.all(created.map(async (key) => (await this.get(key))!));
  }

  async update(update: ResourceUpdate, owned: readonly NewResource[] = []): Promise<StoredResource> {
    await this.write(async (tx) => {
      for (const along of owned) await this.insert(tx, along, this.timestamp());
      const result = await tx.query(
        `UPDATE resources SET spec = $4, labels = $5, modification_time = $6, version = version + 1
         WHERE type = $1 AND mesh = $2 AND name = $3 AND version = $7`,
        [update.type, update.mesh, update.name, update.spec, JSON.stringify(update.labels ?? {}), this.timestamp(), update.version],
      );
      if (result.rowCount === 0) {
        const exists = await tx.query('SELECT 1 FROM resources WHERE type = $1 AND mesh = $2 AND name = $3', [update.type, update.mesh, update.name]);
        throw exists.rowCount === 0 ? resourceNotFound() : resourceConflict(update.type, update.name, update.mesh);
      }
      await this.record(tx, 'update', update);
    });
    return (await this.get(update))!;
  }

  async delete(key: ResourceKey): Promise<void> {
    await this.write(async (tx) => {
      if (!(await this.remove(tx, key))) throw resourceNotFound();
    });
  }

  async deleteMesh(mesh: string): Promise<void> {
    await this.write(async (tx) => {
      if (!(await this.remove(tx, { type: meshKind.name, mesh: '', name: mesh }))) throw resourceNotFound();
      const owned = await tx.query<ResourceKey>('SELECT type, mesh, name FROM resources WHERE mesh = $1 ORDER BY type, name', [mesh]);
      await tx.query('DELETE FROM resources WHERE mesh = $1', [mesh]);
      for (const key of owned.rows) await this.record(tx, 'delete', key);
    });
  }

  async writeBatch(writes: BatchWrite[], options: BatchOptions = {}): Promise<ResourceChange[]> {
    const from = this.applied;
    let last = from;
    await this.write(async (tx) => {
      const time = this.timestamp();
      for (const [key, value] of Object.entries(options.settings ?? {})) {
        if (value === null) await tx.query('DELETE FROM settings WHERE key = $1', [key]);
        else await tx.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
      }
      for (const write of writes) {
        if (write.operation === 'delete') {
          await this.remove(tx, write.key);
          continue;
        }
        const { resource } = write;
        const updated = await tx.query(
          `UPDATE resources SET spec = $4, labels = $5, modification_time = $6, version = version + 1
           WHERE type = $1 AND mesh = $2 AND name = $3`,
          [resource.type, resource.mesh, resource.name, resource.spec, JSON.stringify(resource.labels ?? {}), time],
        );
        if (updated.rowCount === 0) await this.insert(tx, resource, time);
        else await this.record(tx, 'update', resource);
      }
      last = this.lastRecorded;
    });
    const since = await this.changesSince(from, Math.max(1, last - from));
    return since.resync ? [] : since.changes.filter((change) => change.revision <= last);
  }

  async currentRevision(): Promise<number> {
    await this.catchingUp;
    return this.applied;
  }

  async changesSince(revision: number, limit = 1000): Promise<ChangesSince> {
    if (revision < this.prunedThrough) return { resync: true, revision: this.applied };
    const rows = await this.query<{ revision: string; type: string; mesh: string; name: string; operation: ResourceChange['operation'] }>(
      'SELECT revision, type, mesh, name, operation FROM changes WHERE revision > $1 ORDER BY revision LIMIT $2',
      [revision, limit],
    );
    const changes = rows.rows.map((row) => ({ ...row, revision: Number(row.revision) }));
    // Revisions have no gaps: a missing next one was pruned (perhaps by another instance).
    if (changes.length > 0 && changes[0]!.revision !== revision + 1) {
      this.prunedThrough = Math.max(this.prunedThrough, Number((await this.getSetting(PRUNED_THROUGH)) ?? 0), changes[0]!.revision - 1);
      return { resync: true, revision: this.applied };
    }
    return { resync: false, changes, revision: changes.at(-1)?.revision ?? revision };
  }

  async getSetting(key: string): Promise<string | undefined> {
    const result = await this.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
    return result.rows[0]?.value;
  }

  async putSetting(key: string, value: string): Promise<void> {
    await this.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      throw asStoreError(error);
    }
  }

  onChange(listener: ChangeListener): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.events.removeAllListeners();
    await this.catchingUp.catch(() => {});
    await this.listener?.end().catch(() => {});
    await this.pool.end().catch(() => {});
  }

  private async migrate(): Promise<void> {
    // Instances starting together migrate one at a time.
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [WRITE_LOCK + 1]);
      await refuseNewerSchema(client, this.options.database);
      await migrate(drizzle(client), { migrationsFolder: MIGRATIONS });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [WRITE_LOCK + 1]).catch(() => {});
      client.release();
    }
  }

  /** Whether this instance follows the change log now: its database is reachable. */
  get available(): boolean {
    return this.following;
  }

  private async listen(config: pg.ClientConfig): Promise<void> {
    const listener = new pg.Client(config);
    const lost = () => {
      if (this.listener !== listener) return;
      this.listener = undefined;
      this.setFollowing(false);
      void this.relisten(config);
    };
    listener.on('error', lost);
    listener.on('end', lost);
    listener.on('notification', () => this.scheduleCatchUp());
    try {
      await listener.connect();
      await listener.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      await listener.end().catch(() => {});
      throw error;
    }
    this.listener = listener;
    this.setFollowing(true);
  }

  /** Follows the change log again once the database is back, then reads what was missed. */
  private async relisten(config: pg.ClientConfig): Promise<void> {
    let wait = this.options.minReconnectIntervalMs ?? 1000;
    while (!this.closed && !this.listener) {
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
      if (this.closed) return;
      try {
        await this.listen(config);
        await this.scheduleCatchUp();
      } catch {
        wait = Math.min(wait * 2, this.options.maxReconnectIntervalMs ?? 30_000);
      }
    }
  }

  private setFollowing(following: boolean): void {
    if (this.following === following) return;
    this.following = following;
    this.options.onAvailabilityChange?.(following);
  }

  /** Reads every resource and the revision they stand at, in one snapshot. */
  private async loadAll(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const rows = await client.query<Row>('SELECT * FROM resources ORDER BY type, mesh, name');
      const revision = await client.query<{ revision: string | null }>('SELECT max(revision) AS revision FROM changes');
      const pruned = await client.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [PRUNED_THROUGH]);
      await client.query('COMMIT');
      this.prunedThrough = Math.max(this.prunedThrough, Number(pruned.rows[0]?.value ?? 0));
      this.index.load(rows.rows.map(toResource));
      this.applied = Number(revision.rows[0]?.revision ?? 0);
    } finally {
      client.release();
    }
  }

  /** Runs writes in one transaction under the write lock, then catches up so reads see them. */
  private async write(writes: (tx: Transaction) => Promise<void>): Promise<void> {
    const tx = await this.pool.connect().catch((error: unknown) => {
      throw asStoreError(error);
    });
    try {
      await tx.query('BEGIN');
      await tx.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK]);
      const last = await tx.query<{ revision: string }>('SELECT coalesce(max(revision), 0) AS revision FROM changes');
      this.lastRecorded = Number(last.rows[0]!.revision);
      await writes(tx);
      await tx.query(`SELECT pg_notify('${CHANNEL}', '')`);
      await this.prune(tx);
      await tx.query('COMMIT');
    } catch (error) {
      await tx.query('ROLLBACK').catch(() => {});
      throw asStoreError(error);
    } finally {
      tx.release();
    }
    await this.scheduleCatchUp();
  }

  private async insert(tx: Transaction, resource: NewResource, time: string): Promise<boolean> {
    const result = await tx.query(
      `INSERT INTO resources (type, mesh, name, spec, version, creation_time, modification_time, labels)
       VALUES ($1, $2, $3, $4, 1, $7, $5, $6) ON CONFLICT DO NOTHING`,
      [resource.type, resource.mesh, resource.name, resource.spec, time, JSON.stringify(resource.labels ?? {}), resource.creationTime ?? time],
    );
    if (result.rowCount === 0) return false;
    await this.record(tx, 'create', resource);
    return true;
  }

  private async remove(tx: Transaction, key: ResourceKey): Promise<boolean> {
    const result = await tx.query('DELETE FROM resources WHERE type = $1 AND mesh = $2 AND name = $3', [key.type, key.mesh, key.name]);
    if (result.rowCount === 0) return false;
    await this.record(tx, 'delete', key);
    return true;
  }

  private async record(tx: Transaction, operation: ResourceChange['operation'], key: ResourceKey): Promise<void> {
    const revision = this.lastRecorded + 1;
    await tx.query('INSERT INTO changes (revision, type, mesh, name, operation) VALUES ($1, $2, $3, $4, $5)', [revision, key.type, key.mesh, key.name, operation]);
    this.lastRecorded = revision;
  }

  /**
   * Keeps the change log bounded, pruning in steps of a thousand rows; consumers from before what
   * is kept must read everything again.
   */
  private async prune(tx: Transaction): Promise<void> {
    const through = this.lastRecorded - this.retainedChanges;
    if (through - this.prunedThrough < PRUNE_STEP) return;
    await tx.query('DELETE FROM changes WHERE revision <= $1', [through]);
    await tx.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [PRUNED_THROUGH, String(through)]);
    this.prunedThrough = through;
  }

  private scheduleCatchUp(): Promise<void> {
    this.catchingUp = this.catchingUp.then(() => this.catchUp()).catch(() => {});
    return this.catchingUp;
  }

  /** Applies every change after the last one applied, in revision order, and announces each. */
  private async catchUp(): Promise<void> {
    if (this.closed) return;
    for (;;) {
      const since = await this.changesSince(this.applied, 5000);
      if (since.resync) {
        await this.loadAll();
        return;
      }
      if (since.changes.length === 0) return;
      const keys = since.changes.map(keyOf);
      const rows = await this.query<Row>(
        `SELECT r.* FROM resources r JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(type, mesh, name)
         ON r.type = k.type AND r.mesh = k.mesh AND r.name = k.name`,
        [keys.map((k) => k.type), keys.map((k) => k.mesh), keys.map((k) => k.name)],
      );
      const current = new Map(rows.rows.map((row) => [ResourceIndex.keyText(row), toResource(row)]));
      for (const change of since.changes) {
        const resource = current.get(ResourceIndex.keyText(change));
        if (resource) this.index.remember(resource);
        else this.index.forget(change);
        this.applied = change.revision;
        this.events.emit('change', change);
      }
    }
  }

  private timestamp(): string {
    return this.now().toISOString();
  }
}

/**
 * Refuses a database with migrations this build does not have: a newer version wrote it, and this
 * one would misread it (docs/api.md, Errors).
 */
async function refuseNewerSchema(client: pg.PoolClient, database: string): Promise<void> {
  const table = await client.query<{ found: string | null }>("SELECT to_regclass('drizzle.__drizzle_migrations') AS found");
  if (table.rows[0]?.found === null) return;
  const known = new Set(readMigrationFiles({ migrationsFolder: MIGRATIONS }).map((migration) => migration.folderMillis));
  const applied = await client.query<{ created_at: string }>('SELECT created_at FROM drizzle.__drizzle_migrations');
  const unknown = applied.rows.map((row) => Number(row.created_at)).filter((createdAt) => !known.has(createdAt));
  if (unknown.length === 0) return;
  const when = unknown.map((createdAt) => new Date(createdAt).toISOString()).join(', ');
  throw new Error(`database ${database} was written by a newer version of the control plane (schema migrations unknown to this build, created at ${when}): run that version, or restore a backup`);
}

/**
 * Errors of the database, not of the request: it is unreachable or went away, or it has no room
 * left (SQLSTATE class 53: disk full, out of memory); each is a 503 while reads go on from memory.
 */
function asStoreError(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('53')) {
    return new DomainError('unavailable', `The store cannot write: the database server has no room (SQLSTATE ${code}); reads are still served, try the write again later`, { title: 'Service Unavailable' });
  }
  const connectionLost =
    (typeof code === 'string' && (/^(08|57P0)/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(code))) ||
    /Connection terminated|timeout exceeded when trying to connect/i.test((error as Error).message ?? '');
  return connectionLost ? storeUnavailable() : error;
}

/** How to reach the database, for other sessions on it (leader election). */
export function connectionConfig(options: PostgresStoreOptions): pg.ClientConfig {
  return {
    host: options.host,
    port: options.port,
    user: options.user,
    ...(options.password ? { password: options.password } : {}),
    database: options.database,
    connectionTimeoutMillis: (options.connectionTimeoutSeconds ?? 0) * 1000,
    ...(options.ssl !== undefined ? { ssl: options.ssl } : {}),
  };
}
