import type { AnyKind, Mode } from '@mesh/model';
import type { ResourceKey, ResourceStore, StoredResource } from '@mesh/store';

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
  afterCreate?: (ctx: ManagerContext, created: StoredResource, spec: Spec) => Promise<void>;
  /** Before an update is stored; returns the spec to store. */
  beforeUpdate?: (ctx: ManagerContext, key: ResourceKey, spec: Spec, current: StoredResource) => Promise<Spec>;
  afterUpdate?: (ctx: ManagerContext, updated: StoredResource, spec: Spec) => Promise<void>;
  beforeDelete?: (ctx: ManagerContext, current: StoredResource) => Promise<void>;
  /** Replaces the plain delete (a mesh takes what it owns along). */
  delete?: (ctx: ManagerContext, key: ResourceKey) => Promise<void>;
}

export type HooksByKind = ReadonlyMap<AnyKind['name'], KindHooks>;
