import { EventEmitter } from 'node:events';
import { DomainError, meshKind, resourceAlreadyExists, resourceConflict, resourceNotFound } from '@mesh/model';
import type { DriverTransaction, PersistedState, PersistenceDriver, ResourceContent } from './driver.js';
import { ResourceIndex } from './resource-index.js';
import type {
  BatchOptions,
  BatchWrite,
  ChangeListener,
  ChangesSince,
  ListPage,
  ListQuery,
  NewResource,
  ResourceChange,
  ResourceKey,
  ResourceStore,
  ResourceUpdate,
  StoredResource,
} from './store.js';

export interface StoreEngineOptions {
  /** Source of timestamps; tests pin it. */
  now?: () => Date;
  /** Change-log rows kept; a consumer that asks from before them reads everything again. */
  retainedChanges?: number;
}

/** The log is pruned in steps of this many rows, not at every write. */
const PRUNE_STEP = 1000;
/** Changes others committed are read this many at a time. */
const CATCH_UP_STEP = 5000;

/** A change of a transaction and the resource it leaves (none for a delete). */
interface Written {
  change: ResourceChange;
  resource: StoredResource | undefined;
}

/** What one write does inside the transaction it shares with the writes grouped with it. */
interface WriteStep {
  tx: DriverTransaction;
  /** The time of the transaction, the modification time of everything it writes. */
  time: string;
  /** The changes of this write, appended as it makes them. */
  written: Written[];
  /** The resource as memory holds it, unless an earlier write of the transaction touched its key. */
  remembered(key: ResourceKey): StoredResource | undefined;
}

/** A write waiting for its transaction, and how its caller hears the outcome. */
interface PendingWrite {
  work: (step: WriteStep) => Promise<void>;
  resolve: (written: Written[]) => void;
  reject: (error: unknown) => void;
}

/** What became of one write of a transaction: its changes, or the error of its own checks. */
type WriteOutcome = { written: Written[] } | { error: DomainError };

/** Stored resources are shared between readers, so they are frozen. */
function freeze(resource: StoredResource): StoredResource {
  Object.freeze(resource.labels);
  return Object.freeze(resource);
}

const keyOf = (key: ResourceKey): ResourceKey => ({ type: key.type, mesh: key.mesh, name: key.name });

/** Code-unit order of (type, name), the order a mesh's resources are deleted in. */
const byTypeAndName = (a: ResourceKey, b: ResourceKey): number => (a.type < b.type ? -1 : a.type > b.type ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The store, once for every database: every resource in memory (reads, counts and deep pages
 * cost no query), the checks of each write (taken keys, versions, missing resources), batches,
 * the store-wide revisions and the change log, and the announcement of each committed change in
 * revision order. A `PersistenceDriver` persists the rows and loads them; a shared database's
 * driver also tells of the changes other instances committed, which are read and announced in
 * the same order as this instance's own.
 */
export class StoreEngine implements ResourceStore {
  private readonly index = new ResourceIndex();
  private readonly events = new EventEmitter();
  private readonly now: () => Date;
  private readonly retainedChanges: number;
  /** The revision of the last change in memory and announced. */
  private revision = 0;
  /** The change-log revision through which rows were pruned, as far as this instance knows. */
  private prunedThrough = 0;
  /** The transaction or database read under way: one at a time, in the order asked. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The writes that will share the next transaction, while its turn has not come. */
  private gathering: PendingWrite[] | undefined;
  private closed = false;

  constructor(
    private readonly driver: PersistenceDriver,
    loaded: PersistedState,
    options: StoreEngineOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.retainedChanges = options.retainedChanges ?? 100_000;
    this.events.setMaxListeners(0);
    this.load(loaded);
    driver.shared?.follow((revision) => {
      void this.serialized(async () => {
        if (revision === undefined || revision > this.revision) await this.catchUp();
      }).catch(() => {
        // The next word from the database, or this instance's next write, reads what was missed.
      });
    });
  }

  /** Whether the database can take writes now. */
  get available(): boolean {
    return this.driver.available;
  }

  get(key: ResourceKey): Promise<StoredResource | undefined> {
    return Promise.resolve(this.index.get(key));
  }

  getMany(keys: readonly ResourceKey[]): Promise<Array<StoredResource | undefined>> {
    return Promise.resolve(keys.map((key) => this.index.get(key)));
  }

  list(query: ListQuery): Promise<ListPage> {
    return Promise.resolve(this.index.list(query));
  }

  count(type: string, mesh?: string): Promise<number> {
    return Promise.resolve(this.index.count(type, mesh));
  }

  async create(resource: NewResource, owned: readonly NewResource[] = []): Promise<StoredResource> {
    const [created] = await this.commit(async (step) => {
      if (!(await this.insert(step, resource))) throw resourceAlreadyExists(resource.type, resource.name, resource.mesh);
      for (const along of owned) await this.insert(step, along);
    });
    return created!.resource!;
  }

  async createMissing(list: NewResource[]): Promise<StoredResource[]> {
    const created = await this.commit(async (step) => {
      for (const resource of list) await this.insert(step, resource);
    });
    return created.map(({ resource }) => resource!);
  }

  async update(update: ResourceUpdate, owned: readonly NewResource[] = []): Promise<StoredResource> {
    const written = await this.commit(async (step) => {
      for (const along of owned) await this.insert(step, along);
      const content = { type: update.type, mesh: update.mesh, name: update.name, spec: update.spec, labels: update.labels ?? {}, modificationTime: step.time };
      if (await this.replace(step, content, update.version, step.remembered(update))) return;
      throw (await step.tx.exists(update)) ? resourceConflict(update.type, update.name, update.mesh) : resourceNotFound();
    });
    return written.at(-1)!.resource!;
  }

  async delete(key: ResourceKey): Promise<void> {
    await this.commit(async (step) => {
      if (!(await this.remove(step, keyOf(key)))) throw resourceNotFound();
    });
  }

  async deleteMesh(mesh: string): Promise<void> {
    await this.commit(async (step) => {
      if (!(await this.remove(step, { type: meshKind.name, mesh: '', name: mesh }))) throw resourceNotFound();
      for (const key of (await step.tx.deleteInMesh(mesh)).sort(byTypeAndName)) step.written.push({ change: { operation: 'delete', type: key.type, mesh: key.mesh, name: key.name, revision: 0 }, resource: undefined });
    });
  }

  async writeBatch(writes: BatchWrite[], options: BatchOptions = {}): Promise<ResourceChange[]> {
    const written = await this.commit(async (step) => {
      for (const [key, value] of Object.entries(options.settings ?? {})) await step.tx.writeSetting(key, value);
      for (const write of writes) {
        if (write.operation === 'delete') {
          await this.remove(step, keyOf(write.key));
          continue;
        }
        const { resource } = write;
        const content = { type: resource.type, mesh: resource.mesh, name: resource.name, spec: resource.spec, labels: resource.labels ?? {}, modificationTime: step.time };
        // Memory says which of the two is likely; the database decides.
        if (this.index.get(resource)) {
          if (!(await this.replace(step, content))) await this.insert(step, resource);
        } else if (!(await this.insert(step, resource))) await this.replace(step, content);
      }
    });
    return written.map(({ change }) => change);
  }

  async currentRevision(): Promise<number> {
    return this.serialized(() => Promise.resolve(this.revision));
  }

  async changesSince(revision: number, limit = 1000): Promise<ChangesSince> {
    return this.serialized(async () => {
      if (revision < this.prunedThrough) return { resync: true, revision: this.revision };
      // Only what memory holds: a change's resource can be read as soon as the change is seen.
      const wanted = Math.min(limit, this.revision - revision);
      if (wanted <= 0) return { resync: false, changes: [], revision };
      const changes = await this.driver.readChanges(revision, wanted);
      // Revisions have no gaps: a missing next one was pruned (perhaps by another instance).
      const first = changes[0];
      if (first?.revision !== revision + 1) {
        this.prunedThrough = Math.max(this.prunedThrough, (first?.revision ?? this.revision + 1) - 1);
        return { resync: true, revision: this.revision };
      }
      return { resync: false, changes, revision: changes.at(-1)!.revision };
    });
  }

  async getSetting(key: string): Promise<string | undefined> {
    return this.serialized(() => this.driver.readSetting(key));
  }

  async putSetting(key: string, value: string): Promise<void> {
    await this.commit((step) => step.tx.writeSetting(key, value));
  }

  onChange(listener: ChangeListener): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.events.removeAllListeners();
    await this.queue;
    await this.driver.close();
  }

  /** Runs `task` after every transaction and read asked before it. */
  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Runs `work` in a transaction that also appends its changes to the change log, numbered with
   * the next revisions; once it commits, memory follows and the changes are announced in order.
   * Writes asked while earlier work holds the queue, or in the same turn of the event loop, share
   * one transaction (docs/architecture.md, Grouped commits): each in a savepoint of its own, so
   * that its checks refuse it alone and leave nothing of it behind. A refused or failed write
   * leaves memory, revisions and listeners as they were.
   */
  private commit(work: (step: WriteStep) => Promise<void>): Promise<Written[]> {
    return new Promise((resolve, reject) => {
      const write = { work, resolve, reject };
      if (this.gathering) {
        this.gathering.push(write);
        return;
      }
      const group = [write];
      this.gathering = group;
      void this.serialized(async () => {
        // The requests read in this turn of the event loop reach their writes before it ends.
        await new Promise(setImmediate);
        this.gathering = undefined;
        await this.commitGroup(group);
      });
    });
  }

  /** Commits the writes of a group together, or each alone when the database refuses them together. */
  private async commitGroup(group: readonly PendingWrite[]): Promise<void> {
    let outcomes: WriteOutcome[];
    try {
      outcomes = await this.transaction(group);
    } catch (error) {
      if (group.length === 1) {
        group[0]!.reject(error);
        return;
      }
      // Not one write's checks but the database (full, gone): each write learns its own fate.
      for (const write of group) await this.commitGroup([write]);
      return;
    }
    outcomes.forEach((outcome, i) => ('error' in outcome ? group[i]!.reject(outcome.error) : group[i]!.resolve(outcome.written)));
  }

  /** One transaction of the group's writes, in the order asked; a write alone needs no savepoint. */
  private async transaction(group: readonly PendingWrite[]): Promise<WriteOutcome[]> {
    let latest = this.revision;
    let prunedThrough = this.prunedThrough;
    const outcomes: WriteOutcome[] = [];
    const written: Written[] = [];
    await this.driver.transaction(async (tx) => {
      if (tx.latestRevision) latest = await tx.latestRevision();
      const time = this.now().toISOString();
      // The keys the group's earlier writes wrote, looked up rather than searched: a group of
      // thousands of insight writes searched its list once per write.
      const writtenKeys = new Set<string>();
      const remembered = (key: ResourceKey) => (writtenKeys.has(ResourceIndex.keyText(key)) ? undefined : this.index.get(key));
      for (const { work } of group) {
        const step: WriteStep = { tx, time, written: [], remembered };
        if (group.length === 1) await work(step);
        else {
          try {
            await tx.savepoint(() => work(step));
          } catch (error) {
            if (!(error instanceof DomainError)) throw error;
            outcomes.push({ error });
            continue;
          }
        }
        outcomes.push({ written: step.written });
        for (const write of step.written) {
          written.push(write);
          writtenKeys.add(ResourceIndex.keyText(write.change));
        }
      }
      if (written.length === 0) return;
      const changes = written.map(({ change }, i) => {
        change.revision = latest + i + 1;
        return change;
      });
      await tx.appendChanges(changes);
      const through = latest + written.length - this.retainedChanges;
      if (through - prunedThrough >= PRUNE_STEP) {
        await tx.pruneChanges(through);
        prunedThrough = through;
      }
    });
    this.prunedThrough = Math.max(this.prunedThrough, prunedThrough);
    // Others' changes committed before this transaction come first.
    if (latest > this.revision) await this.catchUp(latest).catch(() => {});
    // Still behind: the next catch-up reads this transaction's changes with the ones missed.
    if (latest === this.revision) this.apply(written);
    return outcomes;
  }

  private async insert({ tx, time, written }: WriteStep, resource: NewResource): Promise<boolean> {
    // Written out field by field rather than spread: one shape for every resource the engine makes.
    const { type, mesh, name } = resource;
    const created = freeze({ type, mesh, name, spec: resource.spec, version: 1, creationTime: resource.creationTime ?? time, modificationTime: time, labels: { ...resource.labels } });
    if (!(await tx.insert(created))) return false;
    written.push({ change: { operation: 'create', type, mesh, name, revision: 0 }, resource: created });
    return true;
  }

  private async replace({ tx, written }: WriteStep, content: ResourceContent, version?: number, remembered?: StoredResource): Promise<boolean> {
    const stored = await tx.update(content, version, remembered);
    if (!stored) return false;
    const { type, mesh, name, spec, modificationTime, labels } = content;
    written.push({
      change: { operation: 'update', type, mesh, name, revision: 0 },
      resource: freeze({ type, mesh, name, spec, version: stored.version, creationTime: stored.creationTime, modificationTime, labels: { ...labels } }),
    });
    return true;
  }

  private async remove({ tx, written }: WriteStep, key: ResourceKey): Promise<boolean> {
    if (!(await tx.delete(key))) return false;
    written.push({ change: { operation: 'delete', type: key.type, mesh: key.mesh, name: key.name, revision: 0 }, resource: undefined });
    return true;
  }
  /** Memory follows committed changes, all of them before any is announced; those already read are skipped. */
  private apply(writtenList: readonly Written[]): void {
    const applied: Written[] = [];
    for (const written of writtenList) {
      const { change, resource } = written;
      if (change.revision <= this.revision) continue;
      if (resource) this.index.remember(resource);
      else this.index.forget(change);
      this.revision = change.revision;
      applied.push(written);
    }
    for (const { change, resource } of applied) this.events.emit('change', change, resource);
  }

  /** Reads the changes others committed after the last one in memory (through `revision` when given), and their resources. */
  private async catchUp(revision?: number): Promise<void> {
    const shared = this.driver.shared;
    if (!shared) return;
    while (!this.closed && (revision === undefined || this.revision < revision)) {
      const changes = await this.driver.readChanges(this.revision, revision === undefined ? CATCH_UP_STEP : Math.min(CATCH_UP_STEP, revision - this.revision));
      if (changes.length === 0) return;
      if (changes[0]!.revision !== this.revision + 1) {
        // Pruned before this instance read them: everything is read again.
        this.load(await shared.load());
        return;
      }
      const current = new Map((await shared.readResources(changes)).map((resource) => [ResourceIndex.keyText(resource), freeze(resource)]));
      this.apply(changes.map((change) => ({ change, resource: current.get(ResourceIndex.keyText(change)) })));
    }
  }

  private load(state: PersistedState): void {
    this.index.load(state.resources.map(freeze));
    this.prunedThrough = Math.max(this.prunedThrough, state.prunedThrough);
    this.revision = Math.max(state.revision, state.prunedThrough);
  }
}
