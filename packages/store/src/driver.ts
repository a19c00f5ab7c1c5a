// What a persistence driver does for the store engine: persist rows and load them, nothing else.
// The engine (engine.ts) holds the memory, the revisions, the change log's numbering and pruning,
// the checks and the batch semantics (docs/architecture.md, Store: one engine, two drivers).
import type { ResourceChange, ResourceKey, StoredResource } from './store.js';

/** The setting that records through which revision the change log was pruned. */
export const PRUNED_THROUGH_SETTING = 'changes.prunedThrough';

/** What a database holds, read in one snapshot. */
export interface PersistedState {
  /** Every resource, in any order. */
  resources: StoredResource[];
  /** The revision of the last change in the log; 0 for none. */
  revision: number;
  /** The `PRUNED_THROUGH_SETTING`; 0 when the log was never pruned. */
  prunedThrough: number;
}

/** The new content of a stored resource, which moves its version on by one. */
export interface ResourceContent extends ResourceKey {
  spec: string;
  labels: Record<string, string>;
  modificationTime: string;
}

/** The row writes of one transaction. */
export interface DriverTransaction {
  /**
   * The revision of the last change committed, under the lock that orders writers. Only a shared
   * database (other instances write it too) has it; the engine's own is the latest otherwise.
   */
  latestRevision?(): Promise<number>;
  /** Inserts the resource unless its key is taken; false when it is. */
  insert(resource: StoredResource): Promise<boolean>;
  /**
   * Replaces the content of the stored resource, when its version is `version` (any version when
   * undefined); its new version and creation time, or undefined when no row matched. `remembered`
   * is the resource as the engine's memory holds it, when no earlier write of the transaction
   * touched its key: a driver whose database no other instance writes may answer from it rather
   * than read the row back.
   */
  update(content: ResourceContent, version?: number, remembered?: StoredResource): Promise<{ version: number; creationTime: string } | undefined>;
  /** Whether a resource has the key. */
  exists(key: ResourceKey): Promise<boolean>;
  /** False when there was none. */
  delete(key: ResourceKey): Promise<boolean>;
  /** Deletes every resource of a mesh (not the mesh itself); their keys, in any order. */
  deleteInMesh(mesh: string): Promise<ResourceKey[]>;
  appendChanges(changes: readonly ResourceChange[]): Promise<void>;
  /** `null` removes the setting. */
  writeSetting(key: string, value: string | null): Promise<void>;
  /** Deletes the changes through `revision` and records it as the `PRUNED_THROUGH_SETTING`. */
  pruneChanges(through: number): Promise<void>;
  /**
   * Runs `work` in a savepoint: when it throws, what it wrote is undone and the transaction goes
   * on without it (one write of several sharing the transaction). An error that ends the
   * transaction itself is thrown as it is.
   */
  savepoint<T>(work: () => Promise<T>): Promise<T>;
}

/** A database that other instances write too: how this instance learns of their changes. */
export interface SharedDatabase {
  /** Everything, in one snapshot: again, when changes this instance had not read were pruned. */
  load(): Promise<PersistedState>;
  /**
   * Calls `committed` whenever others may have committed changes, with the last revision when it
   * is known, and once more when the connection that tells comes back after a loss.
   */
  follow(committed: (revision?: number) => void): void;
  /** The stored resources of these keys, those that exist. */
  readResources(keys: readonly ResourceKey[]): Promise<StoredResource[]>;
}

/**
 * Persistence of the store engine's rows in one database, which the driver has read at open (the
 * engine starts from that `PersistedState`). The engine runs one transaction or read at a time,
 * so a driver needs no locking of its own within the process. Errors of the database that say it
 * cannot take a write now (unreachable, full) are `unavailable` DomainErrors.
 */
export interface PersistenceDriver {
  /** Runs `work` in one transaction: committed once it resolves, rolled back if it throws. */
  transaction<T>(work: (tx: DriverTransaction) => Promise<T>): Promise<T>;
  /** The changes after `revision`, oldest first, at most `limit`. */
  readChanges(revision: number, limit: number): Promise<ResourceChange[]>;
  readSetting(key: string): Promise<string | undefined>;
  /** Present for a database other instances write too. */
  readonly shared?: SharedDatabase;
  /** Whether the database can take writes now. */
  readonly available: boolean;
  close(): Promise<void>;
}
