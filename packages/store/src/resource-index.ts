import { SortedKeys } from './sorted-keys.js';
import type { ListPage, ListQuery, ResourceKey, StoredResource } from './store.js';

/** The resources of one type: their (mesh, name) order, and each by its composed key. */
interface TypeIndex {
  keys: SortedKeys;
  byKey: Map<string, StoredResource>;
}

/**
 * Every resource in memory, by type and in (mesh, name) order: what the stores read from, so
 * counts, deep pages and reads cost no query. Stored resources are frozen and shared.
 */
export class ResourceIndex {
  private readonly types = new Map<string, TypeIndex>();

  static keyText(key: ResourceKey): string {
    return `${key.type}\u0000${key.mesh}\u0000${key.name}`;
  }

  get(key: ResourceKey): StoredResource | undefined {
    return this.types.get(key.type)?.byKey.get(SortedKeys.compose(key.mesh, key.name));
  }

  list(query: ListQuery): ListPage {
    const index = this.types.get(query.type);
    if (!index) return { items: [], total: 0 };
    const [start, end] = index.keys.range(query.mesh);
    if (query.nameContains === undefined && query.where === undefined) {
      // Unfiltered: the page is a slice of the ordered keys, whatever the offset.
      const first = start + query.offset;
      const last = query.size === 0 ? end : Math.min(end, first + query.size);
      const items: StoredResource[] = [];
      for (let at = first; at < last; at++) items.push(index.byKey.get(index.keys.at(at)!)!);
      return { items, total: end - start };
    }
    const matching: StoredResource[] = [];
    for (let at = start; at < end; at++) {
      const resource = index.byKey.get(index.keys.at(at)!)!;
      if (query.nameContains && !resource.name.includes(query.nameContains)) continue;
      if (query.where && !query.where(resource)) continue;
      matching.push(resource);
    }
    const last = query.size === 0 ? undefined : query.offset + query.size;
    return { items: matching.slice(query.offset, last), total: matching.length };
  }

  count(type: string, mesh?: string): number {
    const index = this.types.get(type);
    if (!index) return 0;
    const [start, end] = index.keys.range(mesh);
    return end - start;
  }

  /** Replaces everything with resources in (type, mesh, name) order. */
  load(resources: readonly StoredResource[]): void {
    this.types.clear();
    for (const resource of resources) {
      const index = this.indexOf(resource.type);
      const key = SortedKeys.compose(resource.mesh, resource.name);
      index.keys.push(key);
      index.byKey.set(key, resource);
    }
  }

  remember(resource: StoredResource): void {
    const index = this.indexOf(resource.type);
    const key = SortedKeys.compose(resource.mesh, resource.name);
    if (!index.byKey.has(key)) index.keys.insert(key);
    index.byKey.set(key, resource);
  }

  forget(key: ResourceKey): void {
    const index = this.types.get(key.type);
    const composed = SortedKeys.compose(key.mesh, key.name);
    if (!index?.byKey.delete(composed)) return;
    index.keys.remove(composed);
  }

  private indexOf(type: string): TypeIndex {
    let index = this.types.get(type);
    if (!index) {
      index = { keys: new SortedKeys(), byKey: new Map() };
      this.types.set(type, index);
    }
    return index;
  }
}
