import { findKind, type AnyKind } from '@mesh/model';
import { SortedKeys } from './sorted-keys.js';
import type { ListFilter, ListPage, ListQuery, ResourceKey, StoredResource } from './store.js';

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
    if (!index) return { items: [], total: 0, start: 0 };
    const [start, end] = index.keys.range(query.mesh);
    // Where the page resumes: just after the key it names, found in the order, whether it still exists or not.
    const resume = query.after ? Math.min(end, Math.max(start, index.keys.positionAfter(SortedKeys.compose(query.after.mesh, query.after.name)))) : start;
    if (!isFiltered(query)) {
      // Unfiltered: the page is a slice of the ordered keys, whatever the offset.
      const first = Math.min(end, resume + query.offset);
      const last = query.size === 0 ? end : Math.min(end, first + query.size);
      const items: StoredResource[] = [];
      for (let at = first; at < last; at++) items.push(index.byKey.get(index.keys.at(at)!)!);
      return { items, total: end - start, start: first - start };
    }
    const matches = listFilterOf(query);
    const matching: StoredResource[] = [];
    let before = 0;
    for (let at = start; at < end; at++) {
      const resource = index.byKey.get(index.keys.at(at)!)!;
      if (!matches(resource)) continue;
      if (at < resume) before++;
      matching.push(resource);
    }
    const first = Math.min(matching.length, before + query.offset);
    return { items: matching.slice(first, query.size === 0 ? undefined : first + query.size), total: matching.length, start: first };
  }

  count(type: string, mesh?: string): number {
    const index = this.types.get(type);
    if (!index) return 0;
    const [start, end] = index.keys.range(mesh);
    return end - start;
  }

  /** Replaces everything with these resources, in any order. */
  load(resources: readonly StoredResource[]): void {
    this.types.clear();
    for (const resource of resources) {
      const index = this.indexOf(resource.type);
      const key = SortedKeys.compose(resource.mesh, resource.name);
      index.keys.push(key);
      index.byKey.set(key, resource);
    }
    for (const index of this.types.values()) index.keys.sort();
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

const isFiltered = (filter: ListFilter): boolean => filter.nameContains !== undefined || filter.tags !== undefined || filter.gateway !== undefined;

// Stored resources are immutable and shared, so each one's spec is parsed once for filtering.
const parsedSpecs = new WeakMap<StoredResource, Record<string, unknown>>();
function specOf(resource: StoredResource): Record<string, unknown> {
  let spec = parsedSpecs.get(resource);
  if (!spec) {
    spec = JSON.parse(resource.spec) as Record<string, unknown>;
    parsedSpecs.set(resource, spec);
  }
  return spec;
}

/** One tag set holds every wanted key, each value containing the wanted one (or wanted `*`). */
const tagSetMatches = (tags: Record<string, string>, wanted: Array<[string, string]>): boolean =>
  wanted.every(([key, value]) => {
    // Own keys only: `constructor` or `__proto__` are no tags of anything.
    const actual = Object.hasOwn(tags, key) ? tags[key] : undefined;
    return typeof actual === 'string' && (value === '*' || actual.includes(value));
  });

/**
 * The predicate of a list filter over stored resources of one type. Tag and gateway filters
 * read the kind's descriptor; a kind without tag sets or gateways ignores them.
 */
export function listFilterOf(query: ListFilter & { type: string }): (resource: StoredResource) => boolean {
  const kind: AnyKind | undefined = findKind(query.type);
  const checks: Array<(resource: StoredResource) => boolean> = [];
  if (query.nameContains) {
    const part = query.nameContains;
    checks.push((resource) => resource.name.includes(part));
  }
  const tagSets = kind?.tagSets;
  const wanted = Object.entries(query.tags ?? {});
  if (tagSets && wanted.length > 0) checks.push((resource) => tagSets(specOf(resource)).some((tags) => tagSetMatches(tags, wanted)));
  const gatewayType = kind?.gatewayType;
  const gateway = query.gateway;
  if (gatewayType && gateway) {
    checks.push((resource) => {
      const type = gatewayType(specOf(resource));
      return gateway === 'any' ? type !== undefined : gateway === 'none' ? type === undefined : type === gateway;
    });
  }
  return (resource) => checks.every((check) => check(resource));
}
