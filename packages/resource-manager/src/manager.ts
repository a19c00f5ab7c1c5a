import { dataplaneKind, DomainError, externalServiceKind, INSIGHT_LINKS, meshKind, rateLimitKind, secretKind, type AnyKind, type Mode } from '@mesh/model';
import type { ListPage, ListQuery, ResourceKey, ResourceStore, StoredResource } from '@mesh/store';
import { dataplaneHooks } from './dataplane.js';
import type { HooksByKind, KindHooks, ManagerContext, Spec } from './hooks.js';
import { meshHooks } from './mesh.js';
import { externalServiceHooks, rateLimitHooks } from './rate-limit.js';
import { secretHooks } from './secret.js';

/** Kind-specific rules, one entry per kind that has any. */
const HOOKS: HooksByKind = new Map<string, KindHooks>([
  [meshKind.name, meshHooks],
  [dataplaneKind.name, dataplaneHooks],
  [secretKind.name, secretHooks],
  [rateLimitKind.name, rateLimitHooks],
  [externalServiceKind.name, externalServiceHooks],
]);

export interface ResourceManagerOptions {
  store: ResourceStore;
  mode: Mode;
  zoneName?: string;
}

export interface WriteResult {
  resource: StoredResource;
  warnings: string[];
}

const NO_HOOKS: KindHooks = {};

/**
 * Writes resources with the rules that span more than one resource: the owning mesh must exist,
 * a mesh brings its defaults and takes what it owns when deleted, guards refuse unsafe deletes.
 * Spec validation has already happened (it needs no store).
 */
export class ResourceManager {
  private readonly ctx: ManagerContext;

  constructor(private readonly options: ResourceManagerOptions) {
    this.ctx = { store: options.store, mode: options.mode, zoneName: options.zoneName };
  }

  get store(): ResourceStore {
    return this.options.store;
  }

  get(kind: AnyKind, mesh: string, name: string): Promise<StoredResource | undefined> {
    return this.options.store.get(keyOf(kind, mesh, name));
  }

  list(query: ListQuery): Promise<ListPage> {
    return this.options.store.list(query);
  }

  async create(kind: AnyKind, mesh: string, name: string, spec: Spec): Promise<WriteResult> {
    const key = keyOf(kind, mesh, name);
    if (kind.scope === 'mesh') await this.requireMesh(mesh);
    const hooks = HOOKS.get(kind.name) ?? NO_HOOKS;
    const defaulted = kind.applyDefaults ? kind.applyDefaults(spec) : spec;
    const toStore = hooks.beforeCreate ? await hooks.beforeCreate(this.ctx, key, defaulted) : defaulted;
    const resource = await this.options.store.create({ ...key, spec: JSON.stringify(toStore) });
    await hooks.afterCreate?.(this.ctx, resource, toStore);
    return { resource, warnings: [] };
  }

  async update(kind: AnyKind, current: StoredResource, spec: Spec): Promise<WriteResult> {
    const key = keyOf(kind, current.mesh, current.name);
    const hooks = HOOKS.get(kind.name) ?? NO_HOOKS;
    const defaulted = kind.applyDefaults ? kind.applyDefaults(spec) : spec;
    const toStore = hooks.beforeUpdate ? await hooks.beforeUpdate(this.ctx, key, defaulted, current) : defaulted;
    const resource = await this.options.store.update({ ...key, spec: JSON.stringify(toStore), version: current.version, labels: current.labels });
    await hooks.afterUpdate?.(this.ctx, resource, toStore);
    return { resource, warnings: [] };
  }

  async delete(kind: AnyKind, current: StoredResource): Promise<void> {
    const hooks = HOOKS.get(kind.name) ?? NO_HOOKS;
    await hooks.beforeDelete?.(this.ctx, current);
    const key = keyOf(kind, current.mesh, current.name);
    if (hooks.delete) await hooks.delete(this.ctx, key);
    else await this.options.store.delete(key);
    await this.deleteInsightOf(kind, key);
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

  /** Creates mesh `default` (with its defaults) unless it exists. */
  async ensureDefaultMesh(): Promise<void> {
    if (await this.get(meshKind, '', 'default')) return;
    try {
      await this.create(meshKind, '', 'default', {});
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'already_exists')) throw error;
    }
  }

  private async requireMesh(mesh: string): Promise<void> {
    if (await this.options.store.get({ type: 'Mesh', mesh: '', name: mesh })) return;
    throw new DomainError('mesh_not_found', 'Mesh is not found', {
      title: 'Could not create a resource',
      violations: [{ field: 'mesh', message: `mesh of name ${mesh} is not found` }],
    });
  }
}

const keyOf = (kind: AnyKind, mesh: string, name: string): ResourceKey => ({
  type: kind.name,
  mesh: kind.scope === 'mesh' ? mesh : '',
  name,
});
