// The one write path of every resource: the REST API and the control plane's own subsystems
// write through `apply` and `remove`, zone sync through `applySynced`. Everything else reads
// (`reader`). See README.md for the steps in order.
import { isDeepStrictEqual } from 'node:util';
import {
  checkMeshName,
  checkResourceName,
  CONTROL_PLANE_LABELS,
  dataplaneKind,
  DomainError,
  externalServiceKind,
  INSIGHT_LINKS,
  invalidResource,
  isDnsLabel,
  isWritableViaApi,
  labelViolations,
  meshKind,
  methodNotAllowed,
  NAME_MESSAGES,
  rateLimitKind,
  readResourceBody,
  resourceNotFound,
  syncsGlobalToZone,
  syncsZoneToGlobal,
  WRITE_TITLES,
  zoneKind,
  type AnyKind,
  type Mode,
  type ResourceMeta,
  type Violation,
} from '@mesh/model';
import type { ListPage, ListQuery, ResourceChange, ResourceKey, ResourceReader, ResourceStore, StoredResource } from '@mesh/store';
import { requireAccess, type Caller } from './access.js';
import { dataplaneHooks } from './dataplane.js';
import { combineHooks, type KindHooks, type ManagerContext, type Spec } from './hooks.js';
import { meshHooks } from './mesh.js';
import { externalServiceHooks, rateLimitHooks } from './rate-limit.js';
import { requireZone, type SyncBatch, syncWrites } from './sync.js';
import { zoneHooks } from './zone.js';

/**
 * The write path's own rules of some kinds; the packages that own other rules register them
 * (`registerHooks`).
 */
const OWN_HOOKS: ReadonlyArray<readonly [AnyKind, KindHooks]> = [
  [meshKind, meshHooks],
  [dataplaneKind, dataplaneHooks],
  [rateLimitKind, rateLimitHooks],
  [externalServiceKind, externalServiceHooks],
  [zoneKind, zoneHooks],
];

const NO_HOOKS: KindHooks = {};

/** Synced names are `<zone>.<name>`; a zone keeps its own names short enough for that. */
const MAX_SYNCED_NAME = 253;

/**
 * Where a write comes from: this control plane (its API or its own subsystems, through `apply`
 * and `remove`), the global (zone sync on a zone), or a zone (zone sync on the global), both
 * through `applySynced`.
 */
export type WriteOrigin = 'local' | SyncBatch['origin'];

export interface WriteOptions {
  /** The API caller; absent for the control plane's own writes (defaults, insights, keys). */
  caller?: Caller;
  /**
   * Leave the stored resource as it is, labels included, when the write would store the spec it
   * holds (a proxy registering itself again as it was): no new version, no change to follow.
   */
  skipUnchanged?: boolean;
}

export interface ResourceManagerOptions {
  /** The store with its writes: the manager is the only holder besides the composition that opened it. */
  store: ResourceStore;
  mode: Mode;
  zoneName?: string;
  /** `apiServer.readOnly` or a Kubernetes environment: the API writes nothing. */
  apiReadOnly?: boolean;
}

export interface WriteResult {
  /** False when an existing resource was updated. */
  created: boolean;
  resource: StoredResource;
  warnings: string[];
}

/** The key of a resource of a known kind: `mesh` is ignored for global kinds. */
export type KindKey = { mesh: string; name: string };

/**
 * Decodes, validates and writes resources with every rule that spans more than the body: names
 * and meta, which mode and origin may write a kind, access, defaults, and the cross-resource
 * rules of each kind (the owning mesh must exist, a mesh brings its defaults and takes what it
 * owns when deleted, guards refuse unsafe deletes).
 */
export class ResourceManager {
  private readonly ctx: ManagerContext;
  /** Hooks by kind name: the write path's own, then those registered. */
  private readonly hooks = new Map<string, KindHooks>(OWN_HOOKS.map(([kind, hooks]) => [kind.name, hooks]));

  constructor(private readonly options: ResourceManagerOptions) {
    this.ctx = { store: options.store, mode: options.mode, zoneName: options.zoneName };
  }

  /** The store, for reading: what every other part of the control plane is given. */
  get reader(): ResourceReader {
    return this.options.store;
  }

  get mode(): Mode {
    return this.options.mode;
  }

  /**
   * Adds rules to a kind, run after those it has: the package that owns a behaviour registers
   * it where the control plane is composed (the CA rules of meshes, their token signing keys).
   */
  registerHooks(kind: AnyKind, hooks: KindHooks): void {
    const current = this.hooks.get(kind.name);
    this.hooks.set(kind.name, current ? combineHooks(kind, current, hooks) : hooks);
  }

  /** `apiServer.readOnly` (or a Kubernetes environment): the REST API accepts no write at all. */
  get apiReadOnly(): boolean {
    return this.options.apiReadOnly ?? false;
  }

  /** Whether the REST API accepts writes of this kind on this control plane. */
  isWritableViaApi(kind: AnyKind): boolean {
    return isWritableViaApi(kind, this.options.mode, this.options.apiReadOnly);
  }

  get(kind: AnyKind, mesh: string, name: string): Promise<StoredResource | undefined> {
    return this.options.store.get(keyOf(kind, mesh, name));
  }

  /** Resources of one kind by mesh and name, in the order asked; undefined where there is none. */
  getMany(kind: AnyKind, keys: ReadonlyArray<{ mesh: string; name: string }>): Promise<Array<StoredResource | undefined>> {
    return this.options.store.getMany(keys.map(({ mesh, name }) => keyOf(kind, mesh, name)));
  }

  list(query: ListQuery): Promise<ListPage> {
    return this.options.store.list(query);
  }

  /**
   * Creates or updates a resource from its wire body, in the reference's order of checks:
   * mode and origin (405), body decoding (400), spec rules, name and meta rules (400 with every
   * violation), access (403), then defaults, the kind's rules and the store write.
   */
  async apply(kind: AnyKind, at: KindKey, body: unknown, options: WriteOptions = {}): Promise<WriteResult> {
    this.requireWritable(kind, 'local', options.caller);
    const { meta, labels, spec } = readResourceBody(kind, body);
    const specViolations = kind.validate(spec);
    if (specViolations.length > 0) throw invalidResource(specViolations);

    const key = keyOf(kind, at.mesh, at.name);
    const current = await this.options.store.get(key);
    const violations = [...this.metaViolations(kind, key, meta, current === undefined), ...labelViolations(labels)];
    if (violations.length > 0) throw invalidResource(violations);
    if (options.caller) requireAccess(options.caller, kind);

    const stored = withoutControlPlaneLabels(labels);
    return current
      ? withTitle(WRITE_TITLES.update, () => this.update(kind, current, spec, stored, options.skipUnchanged ?? false))
      : withTitle(WRITE_TITLES.create, () => this.create(kind, key, spec, stored));
  }

  /** Deletes a resource with its kind's guards and cascades; a proxy's or zone's insight goes along. */
  async remove(kind: AnyKind, at: KindKey, options: WriteOptions = {}): Promise<void> {
    this.requireWritable(kind, 'local', options.caller);
    const key = keyOf(kind, at.mesh, at.name);
    const current = await this.options.store.get(key);
    if (!current) throw resourceNotFound();
    if (options.caller) requireAccess(options.caller, kind);
    const hooks = this.hooks.get(kind.name) ?? NO_HOOKS;
    await hooks.beforeDelete?.(this.ctx, current);
    if (hooks.delete) await hooks.delete(this.ctx, key);
    else await this.options.store.delete(key);
    await this.deleteInsightOf(kind, key);
  }

  /**
   * Applies what zone sync received, in one transaction with the batch's settings (its cursor):
   * only kinds that flow from that sender to this control plane, each copy decoded by its kind's
   * schema and stored in its normal form, labelled with its origin, a zone's copies only while its
   * Zone exists. The sender already applied defaults and cross-resource rules, and the sender
   * wins (docs/multizone.md). The only path a synced copy is written by.
   */
  async applySynced(batch: SyncBatch): Promise<ResourceChange[]> {
    for (const { kind } of batch.kinds) this.requireWritable(kind, batch.origin, undefined);
    const writes = await syncWrites(this.options.store, batch);
    if (typeof batch.origin === 'object' && writes.some((write) => write.operation === 'upsert')) await requireZone(this.options.store, batch.origin.zone);
    if (writes.length === 0 && !batch.settings) return [];
    return this.options.store.writeBatch(writes, batch.settings ? { settings: batch.settings } : {});
  }

  /** Writes a setting of this control plane that outlives a process (its cluster id). */
  putSetting(key: string, value: string): Promise<void> {
    return this.options.store.putSetting(key, value);
  }

  /** Creates mesh `default` (with its defaults) unless it exists. */
  async ensureDefaultMesh(): Promise<void> {
    if (await this.get(meshKind, '', 'default')) return;
    try {
      await this.apply(meshKind, { mesh: '', name: 'default' }, { type: meshKind.name, name: 'default' });
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'already_exists')) throw error;
    }
  }

  /**
   * The API writes what this mode provides (405 otherwise); zone sync writes what flows its way:
   * on a zone what the global sends, on the global what zones send.
   */
  private requireWritable(kind: AnyKind, origin: WriteOrigin, caller: Caller | undefined): void {
    if (origin === 'local') {
      if (caller && !this.isWritableViaApi(kind)) throw methodNotAllowed();
      return;
    }
    const flows = origin === 'global' ? this.options.mode === 'zone' && syncsGlobalToZone(kind) : this.options.mode === 'global' && syncsZoneToGlobal(kind);
    if (!flows) {
      const from = origin === 'global' ? 'the global control plane' : `zone ${origin.zone}`;
      throw new DomainError('bad_request', `${kind.name} is not synced from ${from} to a ${this.options.mode} control plane`, { title: 'Bad Request' });
    }
  }

  /** Meta checks, accumulated in the reference's order (docs/api.md, Resources). */
  private metaViolations(kind: AnyKind, key: ResourceKey, meta: ResourceMeta, creating: boolean): Violation[] {
    const violations: Violation[] = [];
    if (key.name !== meta.name) violations.push({ field: 'name', message: 'name from the URL has to be the same as in body' });
    const zoneName = this.options.mode === 'zone' ? this.options.zoneName : undefined;
    if (zoneName !== undefined && `${zoneName}.${key.name}`.length >= MAX_SYNCED_NAME) {
      violations.push({ field: 'name', message: 'the length of the name must be shorter' });
    }
    if (!kind.acceptedTypes.includes(meta.type)) violations.push({ field: 'type', message: 'type from the URL has to be the same as in body' });
    if (kind.scope === 'mesh' && key.mesh !== meta.mesh) violations.push({ field: 'mesh', message: 'mesh from the URL has to be the same as in body' });
    const nameProblem = checkResourceName(meta.name, creating);
    if (nameProblem) violations.push({ field: 'name', message: nameProblem });
    else if (creating && kind.nameIsDnsLabel && !isDnsLabel(meta.name)) violations.push({ field: 'name', message: NAME_MESSAGES.dnsLabel });
    if (kind.scope === 'mesh') {
      const meshProblem = checkMeshName(meta.mesh);
      if (meshProblem) violations.push({ field: 'mesh', message: meshProblem });
    }
    return violations;
  }

  private async create(kind: AnyKind, key: ResourceKey, spec: Spec, labels: Record<string, string>): Promise<WriteResult> {
    if (kind.scope === 'mesh') await this.requireMesh(key.mesh);
    const hooks = this.hooks.get(kind.name) ?? NO_HOOKS;
    const defaulted = withKindDefaults(kind, spec);
    const toStore = hooks.beforeCreate ? await hooks.beforeCreate(this.ctx, key, defaulted) : defaulted;
    const owned = hooks.owned ? await hooks.owned(this.ctx, key, toStore, undefined) : [];
    // Field by field rather than spread: every write reaches the store as one object shape.
    const resource = await this.options.store.create({ type: key.type, mesh: key.mesh, name: key.name, spec: JSON.stringify(toStore), labels }, owned);
    return { created: true, resource, warnings: [] };
  }

  private async update(kind: AnyKind, current: StoredResource, spec: Spec, labels: Record<string, string>, skipUnchanged: boolean): Promise<WriteResult> {
    const key = keyOf(kind, current.mesh, current.name);
    const hooks = this.hooks.get(kind.name) ?? NO_HOOKS;
    const defaulted = withKindDefaults(kind, spec);
    const toStore = hooks.beforeUpdate ? await hooks.beforeUpdate(this.ctx, key, defaulted, current) : defaulted;
    // Compared as stored (no undefined fields), whatever the order of the fields.
    if (skipUnchanged && isDeepStrictEqual(JSON.parse(JSON.stringify(toStore)), JSON.parse(current.spec))) {
      return { created: false, resource: current, warnings: [] };
    }
    const owned = hooks.owned ? await hooks.owned(this.ctx, key, toStore, current) : [];
    const resource = await this.options.store.update({ type: key.type, mesh: key.mesh, name: key.name, spec: JSON.stringify(toStore), version: current.version, labels }, owned);
    return { created: false, resource, warnings: [] };
  }

  /** A proxy's or zone's insight goes with it, so a namesake created later starts afresh. */
  private async deleteInsightOf(kind: AnyKind, key: ResourceKey): Promise<void> {
    const link = INSIGHT_LINKS.find((l) => l.entity === kind);
    if (!link) return;
    try {
      await this.options.store.delete({ ...key, type: link.insight.name });
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'not_found')) throw error;
    }
  }

  private async requireMesh(mesh: string): Promise<void> {
    if (await this.options.store.get(keyOf(meshKind, '', mesh))) return;
    throw new DomainError('mesh_not_found', 'Mesh is not found', {
      title: WRITE_TITLES.create,
      violations: [{ field: 'mesh', message: `mesh of name ${mesh} is not found` }],
    });
  }
}

const keyOf = (kind: AnyKind, mesh: string, name: string): ResourceKey => ({
  type: kind.name,
  mesh: kind.scope === 'mesh' ? mesh : '',
  name,
});

/** The spec with the defaults of its kind filled in (a kind's spec type is erased in AnyKind). */
function withKindDefaults(kind: AnyKind, spec: Spec): Spec {
  return kind.applyDefaults ? (kind.applyDefaults(spec) as Spec) : spec;
}

function withoutControlPlaneLabels(labels: Record<string, string>): Record<string, string> {
  const rest = { ...labels };
  for (const label of CONTROL_PLANE_LABELS) delete rest[label];
  return rest;
}

/** Errors of the kind's own rules during a create or update carry that operation's title. */
async function withTitle<T>(title: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof DomainError && error.title === undefined) {
      throw new DomainError(error.code, error.message, { title, violations: error.violations });
    }
    throw error;
  }
}
