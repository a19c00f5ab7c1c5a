import { fileURLToPath } from 'node:url';
import { DomainError, storeUnavailable } from '@mesh/model';
import {
  PRUNED_THROUGH_SETTING,
  StoreEngine,
  type ChangeOperation,
  type DriverTransaction,
  type PersistedState,
  type PersistenceDriver,
  type ResourceChange,
  type ResourceKey,
  type SharedDatabase,
  type StoredResource,
} from '@mesh/store';
import { and, asc, DrizzleQueryError, eq, gt, lte, sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { changes, resources, settings } from './schema.js';

const MIGRATIONS = fileURLToPath(new URL('../drizzle', import.meta.url));

/** The channel every instance listens on; the payload is the last revision just committed. */
const CHANNEL = 'mesh_changes';
/** Writers hold this transaction lock, so revisions commit in the order they are numbered. */
const WRITE_LOCK = 0x6d657368;
/** Rows of the change log written by one statement (PostgreSQL takes at most 65,535 parameters). */
const CHANGES_PER_INSERT = 10_000;

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

type Row = typeof resources.$inferSelect;

const toResource = (row: Row): StoredResource => ({ ...row, labels: row.labels === '{}' ? {} : (JSON.parse(row.labels) as Record<string, string>) });

const toChange = (row: typeof changes.$inferSelect): ResourceChange => ({ ...row, operation: row.operation as ChangeOperation });

const byKey = (key: ResourceKey) => and(eq(resources.type, key.type), eq(resources.mesh, key.mesh), eq(resources.name, key.name));

type Database = NodePgDatabase;
/** What a transaction's statements run on. */
type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

/**
 * The server store: the store engine of `@mesh/store` over a PostgreSQL database that several
 * control-plane instances share. Each keeps every resource in memory and follows the change log:
 * a write commits with its revisions and a notification, and every other instance reads the
 * changes after its last revision, refreshes what changed and announces it, in revision order.
 */
export class PostgresResourceStore extends StoreEngine {
  private constructor(driver: PostgresDriver, loaded: PersistedState, options: PostgresStoreOptions) {
    super(driver, loaded, options);
  }

  /** Connects, applies migrations, starts following the change log and loads every resource. */
  static async open(options: PostgresStoreOptions): Promise<PostgresResourceStore> {
    const driver = await PostgresDriver.open(options);
    try {
      return new PostgresResourceStore(driver, await driver.load(), options);
    } catch (error) {
      await driver.close();
      throw error;
    }
  }
}

/**
 * Persistence in PostgreSQL through drizzle over a node-postgres pool; a session of its own
 * listens for the notifications of every instance's commits.
 */
class PostgresDriver implements PersistenceDriver, SharedDatabase {
  private readonly db: Database;
  private listener: pg.Client | undefined;
  private following = false;
  private closed = false;
  /** Told of commits by others; until the engine follows, a notification is kept for it. */
  private committed: ((revision?: number) => void) | undefined;
  private notifiedBeforeFollowing = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: PostgresStoreOptions,
  ) {
    this.db = drizzle({ client: pool });
  }

  static async open(options: PostgresStoreOptions): Promise<PostgresDriver> {
    const config = connectionConfig(options);
    const pool = new pg.Pool({ ...config, max: options.maxOpenConnections || 10 });
    // An idle connection dropped by the server must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    const driver = new PostgresDriver(pool, options);
    try {
      await driver.migrate();
      await driver.listen(config);
      return driver;
    } catch (error) {
      await driver.close();
      throw error;
    }
  }

  get shared(): SharedDatabase {
    return this;
  }

  /** Whether this instance follows the change log now: its database is reachable. */
  get available(): boolean {
    return this.following;
  }

  /** Every resource and the revision they stand at, in one snapshot. */
  async load(): Promise<PersistedState> {
    return storeErrors(() =>
      this.db.transaction(
        async (tx) => {
          const rows = await tx.select().from(resources);
          const revision = await latestRevision(tx);
          const [pruned] = await tx.select({ value: settings.value }).from(settings).where(eq(settings.key, PRUNED_THROUGH_SETTING));
          return { resources: rows.map(toResource), revision, prunedThrough: Number(pruned?.value ?? 0) };
        },
        { isolationLevel: 'repeatable read', accessMode: 'read only' },
      ),
    );
  }

  /** Runs `work` under the write lock and, when it recorded changes, tells every instance at commit. */
  async transaction<T>(work: (tx: DriverTransaction) => Promise<T>): Promise<T> {
    return storeErrors(() =>
      this.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(${WRITE_LOCK})`);
        let last: number | undefined;
        const result = await work(rowWrites(tx, (revision) => (last = revision)));
        if (last !== undefined) await tx.execute(sql`select pg_notify(${CHANNEL}, ${String(last)})`);
        return result;
      }),
    );
  }

  async readChanges(revision: number, limit: number): Promise<ResourceChange[]> {
    const rows = await storeErrors(() => this.db.select().from(changes).where(gt(changes.revision, revision)).orderBy(asc(changes.revision)).limit(limit));
    return rows.map(toChange);
  }

  async readSetting(key: string): Promise<string | undefined> {
    const [row] = await storeErrors(() => this.db.select({ value: settings.value }).from(settings).where(eq(settings.key, key)));
    return row?.value;
  }

  async readResources(keys: readonly ResourceKey[]): Promise<StoredResource[]> {
    const column = (pick: (key: ResourceKey) => string) => sql.param(keys.map(pick));
    const rows = await storeErrors(() =>
      this.db
        .select()
        .from(resources)
        .where(
          sql`(${resources.type}, ${resources.mesh}, ${resources.name}) in (select * from unnest(${column((k) => k.type)}::text[], ${column((k) => k.mesh)}::text[], ${column((k) => k.name)}::text[]))`,
        ),
    );
    return rows.map(toResource);
  }

  follow(committed: (revision?: number) => void): void {
    this.committed = committed;
    if (this.notifiedBeforeFollowing) committed();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listener?.end().catch(() => {});
    await this.pool.end().catch(() => {});
  }

  private tell(revision?: number): void {
    if (this.committed) this.committed(revision);
    else this.notifiedBeforeFollowing = true;
  }

  private async migrate(): Promise<void> {
    // Instances starting together migrate one at a time.
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [WRITE_LOCK + 1]);
      await refuseNewerSchema(client, this.options.database);
      await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [WRITE_LOCK + 1]).catch(() => {});
      client.release();
    }
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
    listener.on('notification', (message) => {
      const revision = Number(message.payload);
      this.tell(message.payload && Number.isInteger(revision) ? revision : undefined);
    });
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

  /** Follows the change log again once the database is back, then has what was missed read. */
  private async relisten(config: pg.ClientConfig): Promise<void> {
    let wait = this.options.minReconnectIntervalMs ?? 1000;
    while (!this.closed && !this.listener) {
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
      if (this.closed) return;
      try {
        await this.listen(config);
        this.tell();
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
}

/** The revision of the last change in the log; 0 for none. */
async function latestRevision(tx: Transaction): Promise<number> {
  const [row] = await tx.select({ revision: sql<number>`coalesce(max(${changes.revision}), 0)`.mapWith(Number) }).from(changes);
  return row?.revision ?? 0;
}

/** The row writes of one transaction; `recorded` hears of the last revision it appends. */
function rowWrites(tx: Transaction, recorded: (revision: number) => void): DriverTransaction {
  const writeSetting = async (key: string, value: string) => {
    await tx.insert(settings).values({ key, value }).onConflictDoUpdate({ target: settings.key, set: { value } });
  };
  return {
    latestRevision: () => latestRevision(tx),
    insert: async (resource) => {
      const result = await tx
        .insert(resources)
        .values({ ...resource, labels: JSON.stringify(resource.labels) })
        .onConflictDoNothing();
      return (result.rowCount ?? 0) > 0;
    },
    update: async (content, version) => {
      const [stored] = await tx
        .update(resources)
        .set({ spec: content.spec, labels: JSON.stringify(content.labels), modificationTime: content.modificationTime, version: sql`${resources.version} + 1` })
        .where(and(byKey(content), version === undefined ? undefined : eq(resources.version, version)))
        .returning({ version: resources.version, creationTime: resources.creationTime });
      return stored;
    },
    exists: async (key) => (await tx.select({ version: resources.version }).from(resources).where(byKey(key))).length > 0,
    delete: async (key) => ((await tx.delete(resources).where(byKey(key))).rowCount ?? 0) > 0,
    deleteInMesh: (mesh) => tx.delete(resources).where(eq(resources.mesh, mesh)).returning({ type: resources.type, mesh: resources.mesh, name: resources.name }),
    appendChanges: async (list) => {
      for (let at = 0; at < list.length; at += CHANGES_PER_INSERT) {
        const rows = list.slice(at, at + CHANGES_PER_INSERT).map(({ revision, type, mesh, name, operation }) => ({ revision, type, mesh, name, operation }));
        await tx.insert(changes).values(rows);
      }
      if (list.length > 0) recorded(list.at(-1)!.revision);
    },
    writeSetting: async (key, value) => {
      if (value === null) await tx.delete(settings).where(eq(settings.key, key));
      else await writeSetting(key, value);
    },
    pruneChanges: async (through) => {
      await tx.delete(changes).where(lte(changes.revision, through));
      await writeSetting(PRUNED_THROUGH_SETTING, String(through));
    },
    savepoint: async (work) => {
      await tx.execute(sql`savepoint write`);
      try {
        const result = await work();
        await tx.execute(sql`release savepoint write`);
        return result;
      } catch (error) {
        await tx.execute(sql`rollback to savepoint write`);
        await tx.execute(sql`release savepoint write`);
        throw error;
      }
    },
  };
}

/** Runs a statement, its database's errors turned into the store's. */
async function storeErrors<T>(statement: () => Promise<T>): Promise<T> {
  try {
    return await statement();
  } catch (error) {
    throw asStoreError(error);
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
  // Drizzle wraps the driver's error, which carries the SQLSTATE.
  const cause = error instanceof DrizzleQueryError ? error.cause : error;
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code.startsWith('53')) {
    return new DomainError('unavailable', `The store cannot write: the database server has no room (SQLSTATE ${code}); reads are still served, try the write again later`, { title: 'Service Unavailable' });
  }
  const connectionLost =
    (typeof code === 'string' && (/^(08|57P0)/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(code))) ||
    /Connection terminated|timeout exceeded when trying to connect/i.test((cause as Error | undefined)?.message ?? '');
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
