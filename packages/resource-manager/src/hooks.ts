import type { AnyKind, Mode } from '@mesh/model';
import type { NewResource, ResourceKey, ResourceStore, StoredResource } from '@mesh/store';

export type Spec = Record<string, unknown>;

/** What kind-specific rules see. */
export interface ManagerContext {
  store: ResourceStore;
  mode: Mode;
  /** This zone's name, on a zone control plane. */
  zoneName: string | undefined;
}

/**
 * The rules of one kind beyond its spec validation: cross-resource checks, defaults written
 * beside it, guards on delete. Hooks throw DomainError to refuse. Several packages may register
 * hooks for one kind (`ResourceManager.registerHooks`); they run in the order registered.
 */
export interface KindHooks {
  /** Before a create is stored; returns the spec to store. */
  beforeCreate?: (ctx: ManagerContext, key: ResourceKey, spec: Spec) => Promise<Spec>;
  /** Before an update is stored; returns the spec to store. */
  beforeUpdate?: (ctx: ManagerContext, key: ResourceKey, spec: Spec, current: StoredResource) => Promise<Spec>;
  /**
   * What the resource brings along (a mesh's default policies, keys and CA), written in the same
   * transaction as the resource, each one where missing: a crash never leaves one without the
   * others. `current` is the stored resource an update replaces.
   */
  owned?: (ctx: ManagerContext, key: ResourceKey, spec: Spec, current: StoredResource | undefined) => Promise<NewResource[]>;
  beforeDelete?: (ctx: ManagerContext, current: StoredResource) => Promise<void>;
  /** Replaces the plain delete (a mesh takes what it owns along). */
  delete?: (ctx: ManagerContext, key: ResourceKey) => Promise<void>;
}

/**
 * The hooks of `earlier` then those of `later`: each spec hook gets the spec the one before
 * returned, owned resources are written together, every delete guard runs. Only one may
 * replace the delete.
 */
export function combineHooks(kind: AnyKind, earlier: KindHooks, later: KindHooks): KindHooks {
  if (earlier.delete && later.delete) throw new Error(`the delete of ${kind.name} is already replaced`);
  const combined: KindHooks = { ...earlier, ...later };
  const { beforeCreate: createFirst, beforeUpdate: updateFirst, owned: ownedFirst, beforeDelete: guardFirst } = earlier;
  const { beforeCreate: createThen, beforeUpdate: updateThen, owned: ownedThen, beforeDelete: guardThen } = later;
  if (createFirst && createThen) combined.beforeCreate = async (ctx, key, spec) => createThen(ctx, key, await createFirst(ctx, key, spec));
  if (updateFirst && updateThen) combined.beforeUpdate = async (ctx, key, spec, current) => updateThen(ctx, key, await updateFirst(ctx, key, spec, current), current);
  if (ownedFirst && ownedThen) combined.owned = async (ctx, key, spec, current) => [...(await ownedFirst(ctx, key, spec, current)), ...(await ownedThen(ctx, key, spec, current))];
  if (guardFirst && guardThen) {
    combined.beforeDelete = async (ctx, current) => {
      await guardFirst(ctx, current);
      await guardThen(ctx, current);
    };
  }
  return combined;
}
