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

const toResource = (row: Row): StoredResource => ({
  ...row,
  labels: row.labels === '{}' ? {} : (JSON.parse(row.labels) as Record<string, string>),
});

const placeholder = (name: string) => sql.placeholder(name);

/**
 * The embedded store: one SQLite file in WAL mode through drizzle. One control-plane process
 * owns the file; it keeps the ordered keys of every type in memory for counts and paging.
 */
export class SqliteResourceStore implements ResourceStore {
  private readonly sqlite: Database.Database;
  private readonly db;
  private readonly now: () => Date;
  private readonly events = new EventEmitter();
  private readonly keysByType = new Map<string, SortedKeys>();
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
      get: this.db.select().from(resources).where(byKey).prepare(),
      pageFrom: this.db
        .select()
        .from(resources)
        .where(and(eq(resources.type, placeholder('type')), sql`(${resources.mesh}, ${resources.name}) >= (${placeholder('mesh')}, ${placeholder('name')})`))
        .orderBy(asc(resources.mesh), asc(resources.name))
        .limit(placeholder('limit'))
        .prepare(),
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
    this.loadKeys();
  }

  async get(key: ResourceKey): Promise<StoredResource | undefined> {
    const row = this.statements.get.get(keyOf(key));
    return row ? toResource(row) : undefined;
  }

  async list(query: ListQuery): Promise<ListPage> {
    if (query.nameContains === undefined && query.where === undefined) return this.listByPosition(query);
    const conditions = [eq(resources.type, query.type)];
    if (query.mesh !== undefined) conditions.push(eq(resources.mesh, query.mesh));
    if (query.nameContains) conditions.push(sql`instr(${resources.name}, ${query.nameContains}) > 0`);
    const rows = this.db.select().from(resources).where(and(...conditions)).orderBy(asc(resources.mesh), asc(resources.name)).all();
    let matching = rows.map(toResource);
    if (query.where) matching = matching.filter(query.where);
    const end = query.size === 0 ? undefined : query.offset + query.size;
    return { items: matching.slice(query.offset, end), total: matching.length };
  }

  async count(type: string, mesh?: string): Promise<number> {
    const keys = this.keysByType.get(type);
    if (!keys) return 0;
    const [start, end] = keys.range(mesh);
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
    const result = this.statements.update.run({
      ...key,
      spec: update.spec,
      labels: JSON.stringify(update.labels ?? {}),
      time: this.timestamp(),
      version: update.version,
    });
    if (result.changes === 0) {
      if (!this.statements.get.get(key)) throw resourceNotFound();
      throw resourceConflict(update.type, update.name, update.mesh);
    }
    this.announce([{ operation: 'update', ...key }]);
    return toResource(this.statements.get.get(key)!);
  }

  async delete(key: ResourceKey): Promise<void> {
    const result = this.statements.delete.run(keyOf(key));
    if (result.changes === 0) throw resourceNotFound();
    this.keysOf(key.type).remove(SortedKeys.compose(key.mesh, key.name));
    this.announce([{ operation: 'delete', ...keyOf(key) }]);
  }

  async deleteMesh(mesh: string): Promise<void> {
    const meshKey = { type: 'Mesh', mesh: '', name: mesh };
    const owned = this.sqlite.transaction(() => {
      if (this.statements.delete.run(meshKey).changes === 0) throw resourceNotFound();
      return this.db.delete(resources).where(eq(resources.mesh, mesh)).returning({ type: resources.type, mesh: resources.mesh, name: resources.name }).all();
    })();
    const removed = [meshKey, ...owned];
    for (const key of removed) this.keysOf(key.type).remove(SortedKeys.compose(key.mesh, key.name));
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

  private listByPosition(query: ListQuery): ListPage {
    const keys = this.keysByType.get(query.type);
    if (!keys) return { items: [], total: 0 };
    const [start, end] = keys.range(query.mesh);
    const total = end - start;
    const first = start + query.offset;
    const limit = Math.min(query.size === 0 ? total : query.size, end - first);
    if (limit <= 0) return { items: [], total };
    const { mesh, name } = SortedKeys.decompose(keys.at(first)!);
    const rows = this.statements.pageFrom.all({ type: query.type, mesh, name, limit });
    return { items: rows.map(toResource), total };
  }

  private insertRow(resource: NewResource, time: string): StoredResource | undefined {
    const labels = JSON.stringify(resource.labels ?? {});
    const result = this.statements.insert.run({ ...keyOf(resource), spec: resource.spec, labels, time });
    if (result.changes === 0) return undefined;
    this.keysOf(resource.type).insert(SortedKeys.compose(resource.mesh, resource.name));
    return { ...keyOf(resource), spec: resource.spec, version: 1, creationTime: time, modificationTime: time, labels: resource.labels ?? {} };
  }

  private keysOf(type: string): SortedKeys {
    let keys = this.keysByType.get(type);
    if (!keys) {
      keys = new SortedKeys();
      this.keysByType.set(type, keys);
    }
    return keys;
  }

  private loadKeys(): void {
    const rows = this.db
      .select({ type: resources.type, mesh: resources.mesh, name: resources.name })
      .from(resources)
      .orderBy(asc(resources.type), asc(resources.mesh), asc(resources.name))
      .all();
    for (const row of rows) this.keysOf(row.type).push(SortedKeys.compose(row.mesh, row.name));
  }

  private timestamp(): string {
    return this.now().toISOString();
  }

  private announce(changes: ResourceChange[]): void {
    for (const change of changes) this.events.emit('change', change);
  }
}

const keyOf = (key: ResourceKey): ResourceKey => ({ type: key.type, mesh: key.mesh, name: key.name });
