import { statSync, type Stats } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DomainError } from '@mesh/model';
import {
  PRUNED_THROUGH_SETTING,
  StoreEngine,
  type ChangeOperation,
  type DriverTransaction,
  type PersistedState,
  type PersistenceDriver,
  type ResourceChange,
  type ResourceContent,
  type StoredResource,
} from '@mesh/store';
import Database from 'better-sqlite3';
import { asc, eq, gt, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { BackgroundCheckpoints, WRITER_CHECKPOINT_PAGES } from './checkpoints.js';
import { changes, resources, settings } from './schema.js';

export interface SqliteStoreOptions {
  /** Database file, or ':memory:'. */
  path: string;
  /** Source of timestamps; tests pin it. */
  now?: () => Date;
  /** Change-log rows kept; a consumer that asks from before them reads everything again. */
  retainedChanges?: number;
  /**
   * The most the database file may hold, in bytes (SQLite's `max_page_count`); a write beyond it
   * fails as on a full disk. No cap when absent or 0.
   */
  maxSizeBytes?: number;
  /**
   * Called once when the path stops naming the database file this store has open (the file was
   * removed, or another one put in its place), with what happened; writes are refused from then on.
   */
  onFileLost?: (what: string) => void;
  /**
   * Where the write-ahead log is copied back into the database file: `background`, a thread of the
   * store's own (the default for a file), or `inline`, by the write whose commit fills it (SQLite's own way).
   */
  checkpoints?: 'background' | 'inline';
}

/** The database file as opened: its path then named this device and inode. */
interface OpenedFile {
  path: string;
  dev: number;
  ino: number;
}

/** How often the path of the database file is checked while no write comes (writes check it first). */
const FILE_CHECK_INTERVAL_MS = 1000;

type Row = typeof resources.$inferSelect;

const MIGRATIONS = fileURLToPath(new URL('../drizzle', import.meta.url));

const toResource = (row: Row): StoredResource => ({ ...row, labels: row.labels === '{}' ? {} : (JSON.parse(row.labels) as Record<string, string>) });

const placeholder = (name: string) => sql.placeholder(name);

type KeyParameters = [type: string, mesh: string, name: string];
type ContentParameters = [spec: string, labels: string, modificationTime: string, ...KeyParameters];
type ResourceRow = [...KeyParameters, spec: string, version: number, creationTime: string, modificationTime: string, labels: string];
type ChangeRow = [revision: number, ...KeyParameters, operation: string];
interface StoredVersion {
  version: number;
  creationTime: string;
}

/**
 * The statements of every write, on better-sqlite3 itself with positional parameters: drizzle's
 * prepared statements map each run's values onto the query's parameters first, about 9 µs of a
 * dataplane's create (docs/architecture.md, Store: one engine, two drivers).
 */
const WRITE_SQL = {
  insert:
    'INSERT INTO resources (type, mesh, name, spec, version, creation_time, modification_time, labels) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  // An update holds the version it read; a batch replaces whatever is stored. Read back with a
  // select, which costs SQLite less than `RETURNING`.
  update: 'UPDATE resources SET spec = ?, labels = ?, modification_time = ?, version = version + 1 WHERE type = ? AND mesh = ? AND name = ? AND version = ?',
  replace: 'UPDATE resources SET spec = ?, labels = ?, modification_time = ?, version = version + 1 WHERE type = ? AND mesh = ? AND name = ?',
  stored: 'SELECT version, creation_time AS creationTime FROM resources WHERE type = ? AND mesh = ? AND name = ?',
  delete: 'DELETE FROM resources WHERE type = ? AND mesh = ? AND name = ?',
  record: 'INSERT INTO changes (revision, type, mesh, name, operation) VALUES (?, ?, ?, ?, ?)',
} as const;

const READ_ALL_RESOURCES =
  'SELECT type, mesh, name, spec, version, creation_time AS creationTime, modification_time AS modificationTime, labels FROM resources';

/**
 * The embedded store: the store engine of `@mesh/store` over one SQLite file in WAL mode, through
 * drizzle. One control-plane process owns the file, so its memory and the file never differ.
 */
export class SqliteResourceStore extends StoreEngine {
  /**
   * Opens the database, applies the migrations it lacks and reads every resource. A file that is
   * no database, is corrupt, cannot be opened, or was written by a newer version (a migration
   * this build does not know) is refused with an error that says so, naming the file.
   */
  constructor(options: SqliteStoreOptions) {
    const driver = new SqliteDriver(options);
    super(driver, driver.loadAtOpen(), options);
  }
}

/**
 * Persistence in one SQLite file, read and written synchronously (better-sqlite3) with prepared
 * statements. It also watches that its path still names the file it opened.
 */
class SqliteDriver implements PersistenceDriver {
  private readonly sqlite: Database.Database;
  private readonly db;
  private readonly statements;
  private readonly path: string;
  /** The file on disk, watched so that writes stop once its path names another file or none; none in memory. */
  private readonly file: OpenedFile | undefined;
  private readonly fileCheck: NodeJS.Timeout | undefined;
  private readonly onFileLost: ((what: string) => void) | undefined;
  /** Why writes are refused for good: the database file was lost while open. */
  private fileLost: DomainError | undefined;
  private readonly tx: DriverTransaction;
  private readonly checkpoints: BackgroundCheckpoints | undefined;

  constructor(options: SqliteStoreOptions) {
    this.path = options.path;
    try {
      this.sqlite = new Database(options.path);
      this.sqlite.pragma('journal_mode = WAL');
      this.sqlite.pragma('synchronous = NORMAL');
      this.sqlite.pragma('busy_timeout = 5000');
      this.sqlite.pragma('foreign_keys = ON');
      if (!this.sqlite.memory && options.checkpoints !== 'inline') {
        this.sqlite.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
        this.checkpoints = new BackgroundCheckpoints(options.path);
      }
      if (options.maxSizeBytes) this.sqlite.pragma(`max_page_count = ${Math.max(1, Math.floor(options.maxSizeBytes / (this.sqlite.pragma('page_size', { simple: true }) as number)))}`);
      this.db = drizzle(this.sqlite);
      refuseNewerSchema(this.sqlite);
      migrate(this.db, { migrationsFolder: MIGRATIONS });
    } catch (error) {
      throw unusableDatabase(options.path, error);
    }

    const setting = this.db
      .insert(settings)
      .values({ key: placeholder('key'), value: placeholder('value') })
      .onConflictDoUpdate({ target: settings.key, set: { value: sql`excluded.value` } })
      .prepare();
    this.statements = {
      begin: this.sqlite.prepare('BEGIN'),
      commit: this.sqlite.prepare('COMMIT'),
      rollback: this.sqlite.prepare('ROLLBACK'),
      savepoint: this.sqlite.prepare('SAVEPOINT write'),
      release: this.sqlite.prepare('RELEASE write'),
      rollbackToSavepoint: this.sqlite.prepare('ROLLBACK TO write'),
      insert: this.sqlite.prepare<ResourceRow>(WRITE_SQL.insert),
      update: this.sqlite.prepare<[...ContentParameters, version: number]>(WRITE_SQL.update),
      replace: this.sqlite.prepare<ContentParameters>(WRITE_SQL.replace),
      stored: this.sqlite.prepare<KeyParameters, StoredVersion>(WRITE_SQL.stored),
      delete: this.sqlite.prepare<KeyParameters>(WRITE_SQL.delete),
      record: this.sqlite.prepare<ChangeRow>(WRITE_SQL.record),
      deleteInMesh: this.db
        .delete(resources)
        .where(eq(resources.mesh, placeholder('mesh')))
        .returning({ type: resources.type, mesh: resources.mesh, name: resources.name })
        .prepare(),
      setting,
      removeSetting: this.db.delete(settings).where(eq(settings.key, placeholder('key'))).prepare(),
      readSetting: this.db.select({ value: settings.value }).from(settings).where(eq(settings.key, placeholder('key'))).prepare(),
      readChanges: this.db.select().from(changes).where(gt(changes.revision, placeholder('revision'))).orderBy(asc(changes.revision)).limit(placeholder('limit')).prepare(),
      prune: this.db.delete(changes).where(sql`${changes.revision} <= ${placeholder('through')}`).prepare(),
    };
    const statements = this.statements;
    /* eslint-disable @typescript-eslint/require-await -- better-sqlite3 is synchronous; async turns its throws into the rejections the driver interface promises */
    this.tx = {
      insert: async (resource) =>
        statements.insert.run(resource.type, resource.mesh, resource.name, resource.spec, resource.version, resource.creationTime, resource.modificationTime, JSON.stringify(resource.labels))
          .changes > 0,
      update: async (content, version, remembered) => {
        const values = contentParameters(content);
        const updated = version === undefined ? statements.replace.run(...values) : statements.update.run(...values, version);
        if (updated.changes === 0) return undefined;
        // Only this process writes the file: the row it updated at the version memory holds is memory's.
        if (remembered !== undefined && remembered.version === version) return { version: remembered.version + 1, creationTime: remembered.creationTime };
        return statements.stored.get(content.type, content.mesh, content.name);
      },
      exists: async (key) => statements.stored.get(key.type, key.mesh, key.name) !== undefined,
      delete: async (key) => statements.delete.run(key.type, key.mesh, key.name).changes > 0,
      deleteInMesh: async (mesh) => statements.deleteInMesh.all({ mesh }),
      appendChanges: async (list) => {
        for (const { revision, type, mesh, name, operation } of list) statements.record.run(revision, type, mesh, name, operation);
      },
      writeSetting: async (key, value) => {
        if (value === null) statements.removeSetting.run({ key });
        else statements.setting.run({ key, value });
      },
      pruneChanges: async (through) => {
        statements.prune.run({ through });
        statements.setting.run({ key: PRUNED_THROUGH_SETTING, value: String(through) });
      },
      savepoint: async (work) => {
        statements.savepoint.run();
        try {
          const result = await work();
          statements.release.run();
          return result;
        } catch (error) {
          statements.rollbackToSavepoint.run();
          statements.release.run();
          throw error;
        }
      },
    };
    /* eslint-enable @typescript-eslint/require-await */
    if (this.sqlite.memory) return;
    const opened = statSync(options.path);
    this.file = { path: options.path, dev: opened.dev, ino: opened.ino };
    this.onFileLost = options.onFileLost;
    this.fileCheck = setInterval(() => this.checkFile(), FILE_CHECK_INTERVAL_MS).unref();
  }

  get available(): boolean {
    return this.fileLost === undefined;
  }

  /** Every resource and where the change log stands, read as the store opens. */
  loadAtOpen(): PersistedState {
    try {
      // Read by better-sqlite3 itself, columns named as the rows drizzle maps: drizzle's mapping of
      // every row took about 0.08 s of a zone's start at 10,000 dataplanes (docs/architecture.md, Start-up).
      const rows = this.sqlite.prepare(READ_ALL_RESOURCES).all() as Row[];
      const latest = this.db.select({ revision: sql<number | null>`max(${changes.revision})` }).from(changes).get();
      const pruned = this.statements.readSetting.get({ key: PRUNED_THROUGH_SETTING });
      return { resources: rows.map(toResource), revision: latest?.revision ?? 0, prunedThrough: Number(pruned?.value ?? 0) };
    } catch (error) {
      throw unusableDatabase(this.path, error);
    }
  }

  /**
   * A write into a file whose path names another file, or none, would be lost at the next open:
   * refused (503), as every write after it, while reads go on from memory.
   */
  async transaction<T>(work: (tx: DriverTransaction) => Promise<T>): Promise<T> {
    this.checkFile();
    if (this.fileLost) throw this.fileLost;
    try {
      this.statements.begin.run();
      const result = await work(this.tx);
      this.statements.commit.run();
      this.checkpoints?.written();
      return result;
    } catch (error) {
      // Rolled back, unless SQLite already did (a full disk may end the transaction itself).
      if (this.sqlite.inTransaction) this.statements.rollback.run();
      throw storageFault(error) ?? error;
    }
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- better-sqlite3 is synchronous; async turns its throws into rejections
  async readChanges(revision: number, limit: number): Promise<ResourceChange[]> {
    return this.statements.readChanges.all({ revision, limit }).map((row) => ({ ...row, operation: row.operation as ChangeOperation }));
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- better-sqlite3 is synchronous; async turns its throws into rejections
  async readSetting(key: string): Promise<string | undefined> {
    return this.statements.readSetting.get({ key })?.value;
  }

  async close(): Promise<void> {
    clearInterval(this.fileCheck);
    await this.checkpoints?.stop();
    if (this.sqlite.open) this.sqlite.close();
  }

  /** Compares the path with the file opened (one stat); the first difference is reported once. */
  private checkFile(): void {
    if (!this.file || this.fileLost) return;
    const what = fileChange(this.file);
    if (what === undefined) return;
    this.fileLost = new DomainError('unavailable', `The store cannot write: ${what}; reads are still served, writes need the file restored and the control plane restarted`, {
      title: 'Service Unavailable',
    });
    clearInterval(this.fileCheck);
    this.onFileLost?.(what);
  }
}

const contentParameters = (content: ResourceContent): ContentParameters => [
  content.spec,
  JSON.stringify(content.labels),
  content.modificationTime,
  content.type,
  content.mesh,
  content.name,
];

/** What became of the opened file's path, or undefined while it still names that file. */
function fileChange(file: OpenedFile): string | undefined {
  let now: Stats | undefined;
  try {
    now = statSync(file.path, { throwIfNoEntry: false });
  } catch (error) {
    return `database ${file.path} can no longer be found (${(error as NodeJS.ErrnoException).code ?? String(error)}) while open`;
  }
  if (!now) return `database ${file.path} was removed while open`;
  if (now.dev !== file.dev || now.ino !== file.ino) return `database ${file.path} was replaced by another file while open`;
  return undefined;
}

/** SQLite's answers that mean the file cannot take a write now, while reads from memory go on. */
const STORAGE_FAULTS: ReadonlyArray<[prefix: string, reason: string]> = [
  ['SQLITE_FULL', 'the disk is full'],
  ['SQLITE_IOERR', 'the disk failed to write'],
  ['SQLITE_READONLY', 'the database file is read-only'],
  ['SQLITE_CANTOPEN', 'the database file cannot be opened'],
];

/** A write the file refused for want of room or access: 503 with the standard body (docs/api.md, Errors). */
function storageFault(error: unknown): DomainError | undefined {
  if (!(error instanceof Database.SqliteError)) return undefined;
  const reason = STORAGE_FAULTS.find(([prefix]) => error.code.startsWith(prefix))?.[1];
  if (reason === undefined) return undefined;
  return new DomainError('unavailable', `The store cannot write: ${reason} (${error.code}); reads are still served, try the write again later`, { title: 'Service Unavailable' });
}

/** Refuses a database with migrations this build does not have: a newer version wrote it. */
function refuseNewerSchema(sqlite: Database.Database): void {
  const table = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (!table) return;
  const known = new Set(readMigrationFiles({ migrationsFolder: MIGRATIONS }).map((migration) => migration.folderMillis));
  const applied = sqlite.prepare('SELECT created_at AS createdAt FROM __drizzle_migrations').all() as Array<{ createdAt: number | string }>;
  const unknown = applied.map((row) => Number(row.createdAt)).filter((createdAt) => !known.has(createdAt));
  if (unknown.length > 0) throw new NewerSchema(unknown);
}

class NewerSchema extends Error {
  constructor(readonly migrations: number[]) {
    super(`schema migrations unknown to this build (created at ${migrations.map((m) => new Date(m).toISOString()).join(', ')})`);
  }
}

/** Why a database file cannot be used, in words an operator can act on. */
function unusableDatabase(path: string, error: unknown): Error {
  const detail = error instanceof Error ? error.message : String(error);
  if (error instanceof NewerSchema) return new Error(`database ${path} was written by a newer version of the control plane (${detail}): run that version, or restore a backup`, { cause: error });
  const code = error instanceof Database.SqliteError ? error.code : '';
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new Error(`database ${path} is not a SQLite database or is corrupt (${detail}): restore a backup, or move the file away to start afresh`, { cause: error });
  }
  if (code === 'SQLITE_FULL') return new Error(`database ${path} cannot be written: the disk is full (${detail})`, { cause: error });
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_PERM') {
    return new Error(`database ${path} cannot be opened for writing (${detail}): check that its directory exists and is writable`, { cause: error });
  }
  return new Error(`database ${path} cannot be used: ${detail}`, { cause: error });
}
