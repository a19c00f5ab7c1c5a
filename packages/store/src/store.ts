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
}

export interface ResourceUpdate extends ResourceKey {
  spec: string;
  /** The version read before the update; a different stored version is a conflict. */
  version: number;
  labels?: Record<string, string>;
}

export interface ListQuery {
  type: string;
  /** Only this mesh; all meshes when absent. */
  mesh?: string;
  /** Case-sensitive substring of the name. */
  nameContains?: string;
  /** Further filtering on the stored resource (tags of a dataplane, say). */
  where?: (resource: StoredResource) => boolean;
  /** Index of the first item in (mesh, name) order after filtering. */
  offset: number;
  /** Page size; 0 means every item. */
  size: number;
}

export interface ListPage {
  items: StoredResource[];
  /** Items matching the query across all pages. */
  total: number;
}

export type ChangeOperation = 'create' | 'update' | 'delete';

export interface ResourceChange extends ResourceKey {
  operation: ChangeOperation;
}

export type ChangeListener = (change: ResourceChange) => void;

/**
 * Persistence of resources. Reads return stored JSON text; writes are atomic; every committed
 * write is announced to change listeners, which derived state (insights, proxy configuration,
 * zone sync) subscribes to instead of polling.
 */
export interface ResourceStore {
  get(key: ResourceKey): Promise<StoredResource | undefined>;
  list(query: ListQuery): Promise<ListPage>;
  count(type: string, mesh?: string): Promise<number>;
  /** Fails with `already_exists` when the key is taken. */
  create(resource: NewResource): Promise<StoredResource>;
  /** Fails with `not_found`, or `conflict` when the stored version moved on. */
  update(update: ResourceUpdate): Promise<StoredResource>;
  /** Fails with `not_found`. */
  delete(key: ResourceKey): Promise<void>;
  /** Creates several resources at once; all or none. Existing keys are skipped. */
  createMissing(resources: NewResource[]): Promise<StoredResource[]>;
  /** Deletes a mesh and every resource it owns, atomically. Fails with `not_found`. */
  deleteMesh(mesh: string): Promise<void>;
  getSetting(key: string): Promise<string | undefined>;
  putSetting(key: string, value: string): Promise<void>;
  onChange(listener: ChangeListener): () => void;
  close(): Promise<void>;
}
