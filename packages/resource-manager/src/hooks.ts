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
 * beside it, guards on delete. Hooks throw DomainError to refuse.
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

export type HooksByKind = ReadonlyMap<AnyKind['name'], KindHooks>;
