import { EventEmitter } from 'node:events';
import { statSync, type Stats } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DomainError, meshKind, resourceAlreadyExists, resourceConflict, resourceNotFound } from '@mesh/model';
import {
  ResourceIndex,
  type BatchOptions,
  type BatchWrite,
  type ChangeListener,
  type ChangeOperation,
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
import Database from 'better-sqlite3';
import { and, asc, eq, gt, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
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
const PRUNED_THROUGH = 'changes.prunedThrough';
const PRUNE_STEP = 1000;

/** Stored resources are shared between readers, so they are frozen. */
const freeze = (resource: StoredResource): StoredResource => {
  Object.freeze(resource.labels);
  return Object.freeze(resource);
};

const toResource = (row: Row): StoredResource =>
  freeze({ ...row, labels: row.labels === '{}' ? {} : (JSON.parse(row.labels) as Record<string, string>) });

const placeholder = (name: string) => sql.placeholder(name);

const keyOf = (key: ResourceKey): ResourceKey => ({ type: key.type, mesh: key.mesh, name: key.name });

/**
 * The embedded store: one SQLite file in WAL mode through drizzle. One control-plane process
 * owns the file, so it keeps every resource in memory as well (written through, read from
 * memory): counts, deep pages and reads cost no query. 10,000 dataplanes take a few MB. Every
 * write transaction appends its changes, numbered with the next revisions, to the change log.
 */
export class SqliteResourceStore implements ResourceStore {
  private readonly sqlite: Database.Database;
  private readonly db;
  private readonly now: () => Date;
  private readonly retainedChanges: number;
  private readonly events = new EventEmitter();
  private readonly index = new ResourceIndex();
  private readonly statements;
  /** Runs writes in one transaction with their change-log rows; built once, as better-sqlite3 builds four wrappers per `transaction()`. */
  private readonly transact: (writes: () => void) => ResourceChange[];
  private revision = 0;
  private prunedThrough = 0;
  /** The file on disk, watched so that writes stop once its path names another file or none; none in memory. */
  private readonly file: OpenedFile | undefined;
  private readonly fileCheck: NodeJS.Timeout | undefined;
  private readonly onFileLost: ((what: string) => void) | undefined;
  /** Why writes are refused for good: the database file was lost while open. */
  private fileLost: DomainError | undefined;

  /**
   * Opens the database, applies the migrations it lacks and reads every resource. A file that is
   * no database, is corrupt, cannot be opened, or was written by a newer version (a migration
   * this build does not know) is refused with an error that says so, naming the file.
   */
  constructor(options: SqliteStoreOptions) {
    this.now = options.now ?? (() => new Date());
    this.retainedChanges = options.retainedChanges ?? 100_000;
    try {
      this.sqlite = new Database(options.path);
      this.sqlite.pragma('journal_mode = WAL');
      this.sqlite.pragma('synchronous = NORMAL');
      this.sqlite.pragma('busy_timeout = 5000');
      this.sqlite.pragma('foreign_keys = ON');
      if (options.maxSizeBytes) this.sqlite.pragma(`max_page_count = ${Math.max(1, Math.floor(options.maxSizeBytes / (this.sqlite.pragma('page_size', { simple: true }) as number)))}`);
      this.db = drizzle(this.sqlite);
      refuseNewerSchema(this.sqlite);
      migrate(this.db, { migrationsFolder: MIGRATIONS });
    } catch (error) {
      throw unusableDatabase(options.path, error);
    }
    this.events.setMaxListeners(0);

    const byKey = and(eq(resources.type, placeholder('type')), eq(resources.mesh, placeholder('mesh')), eq(resources.name, placeholder('name')));
    const newContent = {
      spec: sql`${placeholder('spec')}`,
      labels: sql`${placeholder('labels')}`,
      modificationTime: sql`${placeholder('time')}`,
      version: sql`${resources.version} + 1`,
    };
    this.statements = {
      insert: this.db
        .insert(resources)
        .values({
          type: placeholder('type'),
          mesh: placeholder('mesh'),
          name: placeholder('name'),
          spec: placeholder('spec'),
          version: 1,
          creationTime: placeholder('creationTime'),
          modificationTime: placeholder('time'),
          labels: placeholder('labels'),
        })
        .onConflictDoNothing()
        .prepare(),
      // An update holds the version it read; a batch replaces whatever is stored.
      update: this.db.update(resources).set(newContent).where(and(byKey, eq(resources.version, placeholder('version')))).prepare(),
      replace: this.db.update(resources).set(newContent).where(byKey).prepare(),
      delete: this.db.delete(resources).where(byKey).prepare(),
      record: this.db
        .insert(changes)
        .values({ revision: placeholder('revision'), type: placeholder('type'), mesh: placeholder('mesh'), name: placeholder('name'), operation: placeholder('operation') })
        .prepare(),
    };
    this.transact = this.sqlite.transaction((writes: () => void) => {
      writes();
      const numbered = this.pending.map(({ change }, i) => ({ ...change, revision: this.revision + i + 1 }));
      for (const change of numbered) this.statements.record.run(change);
      this.prune(numbered.at(-1)?.revision ?? this.revision);
      return numbered;
    });
    try {
      this.loadAll();
    } catch (error) {
      throw unusableDatabase(options.path, error);
    }
    if (this.sqlite.memory) return;
    const opened = statSync(options.path);
    this.file = { path: options.path, dev: opened.dev, ino: opened.ino };
    this.onFileLost = options.onFileLost;
    this.fileCheck = setInterval(() => this.checkFile(), FILE_CHECK_INTERVAL_MS).unref();
  }

  /** Whether writes can be kept: false once the database file was lost while open. */
  get available(): boolean {
    return this.fileLost === undefined;
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
    const [change] = this.commit(() => {
      const time = this.timestamp();
      if (!this.insertRow(resource, time)) throw resourceAlreadyExists(resource.type, resource.name, resource.mesh);
      for (const along of owned) this.insertRow(along, time);
    });
    return this.index.get(change!)!;
  }

  async createMissing(list: NewResource[]): Promise<StoredResource[]> {
    const created = this.commit(() => {
      const time = this.timestamp();
      for (const resource of list) this.insertRow(resource, time);
    });
    return created.map((change) => this.index.get(change)!);
  }

  async update(update: ResourceUpdate, owned: readonly NewResource[] = []): Promise<StoredResource> {
    const key = keyOf(update);
    this.commit(() => {
      const current = this.index.get(key);
      if (!current) throw resourceNotFound();
      const time = this.timestamp();
      for (const along of owned) this.insertRow(along, time);
      const labels = update.labels ?? {};
      const result = this.statements.update.run({ ...key, spec: update.spec, labels: JSON.stringify(labels), time, version: update.version });
      if (result.changes === 0) throw resourceConflict(update.type, update.name, update.mesh);
      this.pending.push({
        change: { operation: 'update', ...key },
        resource: freeze({ ...current, spec: update.spec, labels: { ...labels }, modificationTime: time, version: current.version + 1 }),
      });
    });
    return this.index.get(key)!;
  }

  async delete(key: ResourceKey): Promise<void> {
    this.commit(() => {
      if (!this.deleteRow(keyOf(key))) throw resourceNotFound();
    });
  }

  async deleteMesh(mesh: string): Promise<void> {
    this.commit(() => {
      if (!this.deleteRow({ type: meshKind.name, mesh: '', name: mesh })) throw resourceNotFound();
      const owned = this.db
        .select({ type: resources.type, mesh: resources.mesh, name: resources.name })
        .from(resources)
        .where(eq(resources.mesh, mesh))
        .orderBy(asc(resources.type), asc(resources.name))
        .all();
      for (const key of owned) this.deleteRow(key);
    });
  }

  async writeBatch(writes: BatchWrite[], options: BatchOptions = {}): Promise<ResourceChange[]> {
    return this.commit(() => {
      const time = this.timestamp();
      for (const [key, value] of Object.entries(options.settings ?? {})) {
        if (value === null) this.db.delete(settings).where(eq(settings.key, key)).run();
        else this.db.insert(settings).values({ key, value }).onConflictDoUpdate({ target: settings.key, set: { value } }).run();
      }
      for (const write of writes) {
        if (write.operation === 'delete') {
          this.deleteRow(keyOf(write.key));
          continue;
        }
        const { resource } = write;
        const current = this.index.get(resource);
        if (!current) {
          this.insertRow(resource, time);
          continue;
        }
        const labels = resource.labels ?? {};
        this.statements.replace.run({ ...keyOf(resource), spec: resource.spec, labels: JSON.stringify(labels), time });
        this.pending.push({
          change: { operation: 'update', ...keyOf(resource) },
          resource: freeze({ ...current, spec: resource.spec, labels: { ...labels }, modificationTime: time, version: current.version + 1 }),
        });
      }
    });
  }

  async currentRevision(): Promise<number> {
    return this.revision;
  }

  async changesSince(revision: number, limit = 1000): Promise<ChangesSince> {
    if (revision < this.prunedThrough) return { resync: true, revision: this.revision };
    const rows = this.db.select().from(changes).where(gt(changes.revision, revision)).orderBy(asc(changes.revision)).limit(limit).all();
    const found = rows.map((row) => ({ revision: row.revision, type: row.type, mesh: row.mesh, name: row.name, operation: row.operation as ChangeOperation }));
    return { resync: false, changes: found, revision: found.at(-1)?.revision ?? revision };
  }

  async getSetting(key: string): Promise<string | undefined> {
    return this.db.select().from(settings).where(eq(settings.key, key)).get()?.value;
  }

  async putSetting(key: string, value: string): Promise<void> {
    this.requireFile();
    try {
      this.db.insert(settings).values({ key, value }).onConflictDoUpdate({ target: settings.key, set: { value } }).run();
    } catch (error) {
      throw storageFault(error) ?? error;
    }
  }

  onChange(listener: ChangeListener): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  async close(): Promise<void> {
    clearInterval(this.fileCheck);
    this.events.removeAllListeners();
    if (this.sqlite.open) this.sqlite.close();
  }

  /** What the write transaction under way changed, in order; kept in memory once it commits. */
  private pending: Array<{ change: Omit<ResourceChange, 'revision'>; resource: StoredResource | undefined }> = [];

  /**
   * Runs `writes` in one transaction that also appends their changes to the change log; once it
   * commits, the resources in memory follow and the changes are announced in revision order.
   */
  private commit(writes: () => void): ResourceChange[] {
    this.requireFile();
    this.pending = [];
    let committed: ResourceChange[];
    try {
      committed = this.transact(writes);
    } catch (error) {
      // Rolled back: memory, revisions and listeners are as they were.
      throw storageFault(error) ?? error;
    }
    for (const [i, { resource }] of this.pending.entries()) {
      if (resource) this.index.remember(resource);
      else this.index.forget(committed[i]!);
    }
    this.pending = [];
    if (committed.length > 0) this.revision = committed.at(-1)!.revision;
    for (const change of committed) this.events.emit('change', change);
    return committed;
  }

  private insertRow(resource: NewResource, time: string): boolean {
    const labels = JSON.stringify(resource.labels ?? {});
    const creationTime = resource.creationTime ?? time;
    const result = this.statements.insert.run({ ...keyOf(resource), spec: resource.spec, labels, time, creationTime });
    if (result.changes === 0) return false;
    const created = freeze({ ...keyOf(resource), spec: resource.spec, version: 1, creationTime, modificationTime: time, labels: { ...resource.labels } });
    this.pending.push({ change: { operation: 'create', ...keyOf(resource) }, resource: created });
    return true;
  }

  private deleteRow(key: ResourceKey): boolean {
    if (this.statements.delete.run(key).changes === 0) return false;
    this.pending.push({ change: { operation: 'delete', ...key }, resource: undefined });
    return true;
  }

  /** Keeps the change log bounded, in steps; consumers from before what is kept read everything again. */
  private prune(latest: number): void {
    const through = latest - this.retainedChanges;
    if (through - this.prunedThrough < PRUNE_STEP) return;
    this.db.delete(changes).where(sql`${changes.revision} <= ${through}`).run();
    this.db.insert(settings).values({ key: PRUNED_THROUGH, value: String(through) }).onConflictDoUpdate({ target: settings.key, set: { value: String(through) } }).run();
    this.prunedThrough = through;
  }

  /** Reads every resource once at open, in key order, and where the change log stands. */
  private loadAll(): void {
    const rows = this.db.select().from(resources).orderBy(asc(resources.type), asc(resources.mesh), asc(resources.name)).all();
    this.index.load(rows.map(toResource));
    const latest = this.db.select({ revision: sql<number | null>`max(${changes.revision})` }).from(changes).get();
    const pruned = this.db.select().from(settings).where(eq(settings.key, PRUNED_THROUGH)).get();
    this.prunedThrough = Number(pruned?.value ?? 0);
    this.revision = Math.max(latest?.revision ?? 0, this.prunedThrough);
  }

  private timestamp(): string {
    return this.now().toISOString();
  }

  /**
   * A write into a file whose path names another file, or none, would be lost at the next open:
   * refused (503), as every write after it, while reads go on from memory.
   */
  private requireFile(): void {
    this.checkFile();
    if (this.fileLost) throw this.fileLost;
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
