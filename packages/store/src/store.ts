/** A resource as stored: the spec is the JSON text of its normalised wire form. */
export interface StoredResource {
  type: string;
  /** Owning mesh; '' for global kinds. */
  mesh: string;
  name: string;
  spec: string;
  version: number;
  creationTime: string;
  modificationTime: string;
  labels: Record<string, string>;
}

// A type alias, not an interface, so keys can be passed where records are expected.
export type ResourceKey = {
  type: string;
  mesh: string;
  name: string;
};

export interface NewResource extends ResourceKey {
  spec: string;
  labels?: Record<string, string>;
  /** Kept as given when a batch creates the resource (a synced copy keeps its sender's); now otherwise. */
  creationTime?: string;
}

export interface ResourceUpdate extends ResourceKey {
  spec: string;
  /** The version read before the update; a different stored version is a conflict. */
  version: number;
  labels?: Record<string, string>;
}

/** Filters of a list, as data, so a store can evaluate them where its data is. */
export interface ListFilter {
  /** Case-sensitive substring of the name. */
  nameContains?: string;
  /**
   * Some tag set of the resource (its kind's `tagSets`) holds every key, each value containing
   * the wanted one, or any value when the wanted one is `*`.
   */
  tags?: Record<string, string>;
  /** The kind's `gatewayType`: `any` has a gateway, `none` has none, or that type. */
  gateway?: 'any' | 'none' | 'builtin' | 'delegated';
}

export interface ListQuery extends ListFilter {
  type: string;
  /** Only this mesh; all meshes when absent. */
  mesh?: string;
  /**
   * Only the items after this key in (mesh, name) order: a page that resumes after the last item
   * of the one before, so that writes elsewhere in the list between two pages neither skip nor
   * repeat an item (docs/api.md, Lists). The key need not exist any more.
   */
  after?: { mesh: string; name: string };
  /** Index of the first item in (mesh, name) order after filtering, counted from `after` when given. */
  offset: number;
  /** Page size; 0 means every item. */
  size: number;
}

export interface ListPage {
  items: StoredResource[];
  /** Items matching the query across all pages. */
  total: number;
  /** Index of the first item among all that match: the items after the page number `total - start - items.length`. */
  start: number;
}

export type ChangeOperation = 'create' | 'update' | 'delete';

export interface ResourceChange extends ResourceKey {
  operation: ChangeOperation;
  /** Store-wide, strictly increasing and persisted: one per committed change, with no gap. */
  revision: number;
}

/** One write of a batch: create or replace whatever is stored, or delete (a missing key is skipped). */
export type BatchWrite = { operation: 'upsert'; resource: NewResource } | { operation: 'delete'; key: ResourceKey };

export interface BatchOptions {
  /** Settings written in the same transaction (a sync cursor with what it covers); `null` removes one. */
  settings?: Record<string, string | null>;
}

/**
 * The changes after a revision, oldest first, up to `revision`; or, when the store no longer
 * keeps changes that old, word that the consumer must read everything again.
 */
export type ChangesSince = { resync: false; changes: ResourceChange[]; revision: number } | { resync: true; revision: number };

/**
 * Told of each committed change with the resource it left (none after a delete), as memory held
 * it when the change was announced: what a reader of the resource got at that revision.
 */
export type ChangeListener = (change: ResourceChange, resource: StoredResource | undefined) => void;

/**
 * What every reader of resources holds: reads of stored JSON text, served from memory, and the
 * changes. Every committed write gets the next store revision and is announced to change
 * listeners in revision order, which derived state (insights, proxy configuration, zone sync)
 * subscribes to instead of polling. A consumer that remembers the last revision it saw resumes
 * with `changesSince`. Only the resource manager writes (docs/architecture.md, Readers and the writer).
 */
export interface ResourceReader {
  get(key: ResourceKey): Promise<StoredResource | undefined>;
  /** Several keys at once, in their order (a page joining each item with its insight). */
  getMany(keys: readonly ResourceKey[]): Promise<Array<StoredResource | undefined>>;
  list(query: ListQuery): Promise<ListPage>;
  count(type: string, mesh?: string): Promise<number>;
  /** The revision of the last committed change; 0 for a store that never changed. */
  currentRevision(): Promise<number>;
  /** Changes committed after `revision`, oldest first, at most `limit` (1000 by default). */
  changesSince(revision: number, limit?: number): Promise<ChangesSince>;
  getSetting(key: string): Promise<string | undefined>;
  onChange(listener: ChangeListener): () => void;
}

/**
 * The store with its writes: held by the resource manager, which every write goes through, and
 * by the composition that opens and closes it. Writes are atomic.
 */
export interface ResourceStore extends ResourceReader {
  /**
   * Fails with `already_exists` when the key is taken. `owned` (what the resource brings along: a
   * mesh's default policies, keys and CA) is created in the same transaction, each one that does
   * not exist yet, so that a crash never leaves the one without the others.
   */
  create(resource: NewResource, owned?: readonly NewResource[]): Promise<StoredResource>;
  /** Fails with `not_found`, or `conflict` when the stored version moved on; `owned` as for `create`. */
  update(update: ResourceUpdate, owned?: readonly NewResource[]): Promise<StoredResource>;
  /** Fails with `not_found`. */
  delete(key: ResourceKey): Promise<void>;
  /** Creates several resources at once; all or none. Existing keys are skipped. */
  createMissing(resources: NewResource[]): Promise<StoredResource[]>;
  /** Deletes a mesh and every resource it owns, atomically. Fails with `not_found`. */
  deleteMesh(mesh: string): Promise<void>;
  /** Several writes in one transaction: all or none; one change per effective write. */
  writeBatch(writes: BatchWrite[], options?: BatchOptions): Promise<ResourceChange[]>;
  putSetting(key: string, value: string): Promise<void>;
  close(): Promise<void>;
}
