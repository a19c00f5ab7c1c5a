import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { resourceAlreadyExists, resourceConflict, resourceNotFound } from '@mesh/model';
import Database from 'better-sqlite3';
import { and, asc, eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { resources, settings } from './schema.js';
import { SortedKeys } from './sorted-keys.js';
import type {
  ChangeListener,
  ListPage,
  ListQuery,
  NewResource,
  ResourceChange,
  ResourceKey,
  ResourceStore,
  ResourceUpdate,
  StoredResource,
} from './store.js';

export interface SqliteStoreOptions {
  /** Database file, or ':memory:'. */
  path: string;
  /** Source of timestamps; tests pin it. */
  now?: () => Date;
}

type Row = typeof resources.$inferSelect;

const MIGRATIONS = fileURLToPath(new URL('../drizzle', import.meta.url));

/** Stored resources are shared between readers, so they are frozen. */
const freeze = (resource: StoredResource): StoredResource => {
  Object.freeze(resource.labels);
  return Object.freeze(resource);
};

const toResource = (row: Row): StoredResource =>
  freeze({ ...row, labels: row.labels === '{}' ? {} : (JSON.parse(row.labels) as Record<string, string>) });

const placeholder = (name: string) => sql.placeholder(name);

/** The resources of one type: their (mesh, name) order, and each by its composed key. */
interface TypeIndex {
  keys: SortedKeys;
  byKey: Map<string, StoredResource>;
}

/**
 * The embedded store: one SQLite file in WAL mode through drizzle. One control-plane process
 * owns the file, so it keeps every resource in memory as well (written through, read from
 * memory): counts, deep pages and reads cost no query. 10,000 dataplanes take a few MB.
 */
export class SqliteResourceStore implements ResourceStore {
  private readonly sqlite: Database.Database;
  private readonly db;
  private readonly now: () => Date;
  private readonly events = new EventEmitter();
  private readonly types = new Map<string, TypeIndex>();
  private readonly statements;

  constructor(options: SqliteStoreOptions) {
    this.now = options.now ?? (() => new Date());
    this.sqlite = new Database(options.path);
    this.sqlite.pragma('journal_mode = WAL');
    this.sqlite.pragma('synchronous = NORMAL');
    this.sqlite.pragma('busy_timeout = 5000');
    this.sqlite.pragma('foreign_keys = ON');
    this.db = drizzle(this.sqlite);
    migrate(this.db, { migrationsFolder: MIGRATIONS });
    this.events.setMaxListeners(0);

    const byKey = and(eq(resources.type, placeholder('type')), eq(resources.mesh, placeholder('mesh')), eq(resources.name, placeholder('name')));
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
      update: this.db
        .update(resources)
        .set({
          spec: sql`${placeholder('spec')}`,
          labels: sql`${placeholder('labels')}`,
          modificationTime: sql`${placeholder('time')}`,
          version: sql`${resources.version} + 1`,
        })
        .where(and(byKey, eq(resources.version, placeholder('version'))))
        .prepare(),
      delete: this.db.delete(resources).where(byKey).prepare(),
    };
    this.loadAll();
  }

  async get(key: ResourceKey): Promise<StoredResource | undefined> {
    return this.types.get(key.type)?.byKey.get(SortedKeys.compose(key.mesh, key.name));
  }

  async list(query: ListQuery): Promise<ListPage> {
    const index = this.types.get(query.type);
    if (!index) return { items: [], total: 0 };
    const [start, end] = index.keys.range(query.mesh);
    if (query.nameContains === undefined && query.where === undefined) {
      // Unfiltered: the page is a slice of the ordered keys, whatever the offset.
      const first = start + query.offset;
      const last = query.size === 0 ? end : Math.min(end, first + query.size);
      const items: StoredResource[] = [];
      for (let at = first; at < last; at++) items.push(index.byKey.get(index.keys.at(at)!)!);
      return { items, total: end - start };
    }
    const matching: StoredResource[] = [];
    for (let at = start; at < end; at++) {
      const resource = index.byKey.get(index.keys.at(at)!)!;
      if (query.nameContains && !resource.name.includes(query.nameContains)) continue;
      if (query.where && !query.where(resource)) continue;
      matching.push(resource);
    }
    const last = query.size === 0 ? undefined : query.offset + query.size;
    return { items: matching.slice(query.offset, last), total: matching.length };
  }

  async count(type: string, mesh?: string): Promise<number> {
    const index = this.types.get(type);
    if (!index) return 0;
    const [start, end] = index.keys.range(mesh);
    return end - start;
  }

  async create(resource: NewResource): Promise<StoredResource> {
    const created = this.insertRow(resource, this.timestamp());
    if (!created) throw resourceAlreadyExists(resource.type, resource.name, resource.mesh);
    this.announce([{ operation: 'create', ...keyOf(resource) }]);
    return created;
  }

  async createMissing(list: NewResource[]): Promise<StoredResource[]> {
    const time = this.timestamp();
    const created = this.sqlite.transaction(() => list.map((r) => this.insertRow(r, time)).filter((r): r is StoredResource => r !== undefined))();
    this.announce(created.map((r) => ({ operation: 'create' as const, ...keyOf(r) })));
    return created;
  }

  async update(update: ResourceUpdate): Promise<StoredResource> {
    const key = keyOf(update);
    const current = await this.get(key);
    if (!current) throw resourceNotFound();
    const time = this.timestamp();
    const labels = update.labels ?? {};
    const result = this.statements.update.run({ ...key, spec: update.spec, labels: JSON.stringify(labels), time, version: update.version });
    if (result.changes === 0) throw resourceConflict(update.type, update.name, update.mesh);
    const updated = freeze({ ...current, spec: update.spec, labels: { ...labels }, modificationTime: time, version: current.version + 1 });
    this.remember(updated);
    this.announce([{ operation: 'update', ...key }]);
    return updated;
  }

  async delete(key: ResourceKey): Promise<void> {
    const result = this.statements.delete.run(keyOf(key));
    if (result.changes === 0) throw resourceNotFound();
    this.forget(key);
    this.announce([{ operation: 'delete', ...keyOf(key) }]);
  }

  async deleteMesh(mesh: string): Promise<void> {
    const meshKey = { type: 'Mesh', mesh: '', name: mesh };
    const owned = this.sqlite.transaction(() => {
      if (this.statements.delete.run(meshKey).changes === 0) throw resourceNotFound();
      return this.db.delete(resources).where(eq(resources.mesh, mesh)).returning({ type: resources.type, mesh: resources.mesh, name: resources.name }).all();
    })();
    const removed = [meshKey, ...owned];
    for (const key of removed) this.forget(key);
    this.announce(removed.map((key) => ({ operation: 'delete' as const, ...key })));
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

  private insertRow(resource: NewResource, time: string): StoredResource | undefined {
    const labels = JSON.stringify(resource.labels ?? {});
    const result = this.statements.insert.run({ ...keyOf(resource), spec: resource.spec, labels, time });
    if (result.changes === 0) return undefined;
    const created = freeze({ ...keyOf(resource), spec: resource.spec, version: 1, creationTime: time, modificationTime: time, labels: { ...resource.labels } });
    this.remember(created);
    return created;
  }

  private indexOf(type: string): TypeIndex {
    let index = this.types.get(type);
    if (!index) {
      index = { keys: new SortedKeys(), byKey: new Map() };
      this.types.set(type, index);
    }
    return index;
  }

  private remember(resource: StoredResource): void {
    const index = this.indexOf(resource.type);
    const key = SortedKeys.compose(resource.mesh, resource.name);
    if (!index.byKey.has(key)) index.keys.insert(key);
    index.byKey.set(key, resource);
  }

  private forget(key: ResourceKey): void {
    const index = this.types.get(key.type);
    const composed = SortedKeys.compose(key.mesh, key.name);
    if (!index?.byKey.delete(composed)) return;
    index.keys.remove(composed);
  }

  /** Reads every resource once at open, in key order. */
  private loadAll(): void {
    const rows = this.db.select().from(resources).orderBy(asc(resources.type), asc(resources.mesh), asc(resources.name)).all();
    for (const row of rows) {
      const index = this.indexOf(row.type);
      const key = SortedKeys.compose(row.mesh, row.name);
      index.keys.push(key);
      index.byKey.set(key, toResource(row));
    }
  }

  private timestamp(): string {
    return this.now().toISOString();
  }

  private announce(changes: ResourceChange[]): void {
    for (const change of changes) this.events.emit('change', change);
  }
}

const keyOf = (key: ResourceKey): ResourceKey => ({ type: key.type, mesh: key.mesh, name: key.name });
