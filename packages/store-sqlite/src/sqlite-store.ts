import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { meshKind, resourceAlreadyExists, resourceConflict, resourceNotFound } from '@mesh/model';
import {
  ResourceIndex,
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
import { changes, resources, settings } from './schema.js';

export interface SqliteStoreOptions {
  /** Database file, or ':memory:'. */
  path: string;
  /** Source of timestamps; tests pin it. */
  now?: () => Date;
  /** Change-log rows kept; a consumer that asks from before them reads everything again. */
  retainedChanges?: number;
}

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
  private revision = 0;
  private prunedThrough = 0;

  constructor(options: SqliteStoreOptions) {
    this.now = options.now ?? (() => new Date());
    this.retainedChanges = options.retainedChanges ?? 100_000;
    this.sqlite = new Database(options.path);
    this.sqlite.pragma('journal_mode = WAL');
    this.sqlite.pragma('synchronous = NORMAL');
    this.sqlite.pragma('busy_timeout = 5000');
    this.sqlite.pragma('foreign_keys = ON');
    this.db = drizzle(this.sqlite);
    migrate(this.db, { migrationsFolder: MIGRATIONS });
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
          creationTime: placeholder('time'),
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
    this.loadAll();
  }

  async get(key: ResourceKey): Promise<StoredResource | undefined> {
    return this.index.get(key);
  }

  async list(query: ListQuery): Promise<ListPage> {
    return this.index.list(query);
  }

  async count(type: string, mesh?: string): Promise<number> {
    return this.index.count(type, mesh);
  }

  async create(resource: NewResource): Promise<StoredResource> {
    const [change] = this.commit(() => {
      const created = this.insertRow(resource, this.timestamp());
      if (!created) throw resourceAlreadyExists(resource.type, resource.name, resource.mesh);
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

  async update(update: ResourceUpdate): Promise<StoredResource> {
    const key = keyOf(update);
    this.commit(() => {
      const current = this.index.get(key);
      if (!current) throw resourceNotFound();
      const time = this.timestamp();
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

  async writeBatch(writes: BatchWrite[]): Promise<ResourceChange[]> {
    return this.commit(() => {
      const time = this.timestamp();
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
    this.db.insert(settings).values({ key, value }).onConflictDoUpdate({ target: settings.key, set: { value } }).run();
  }

  onChange(listener: ChangeListener): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  async close(): Promise<void> {
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
    this.pending = [];
    const committed = this.sqlite.transaction(() => {
      writes();
      const numbered = this.pending.map(({ change }, i) => ({ ...change, revision: this.revision + i + 1 }));
      for (const change of numbered) this.statements.record.run(change);
      this.prune(numbered.at(-1)?.revision ?? this.revision);
      return numbered;
    })();
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
    const result = this.statements.insert.run({ ...keyOf(resource), spec: resource.spec, labels, time });
    if (result.changes === 0) return false;
    const created = freeze({ ...keyOf(resource), spec: resource.spec, version: 1, creationTime: time, modificationTime: time, labels: { ...resource.labels } });
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
}
