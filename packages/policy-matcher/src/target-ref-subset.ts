// Subsets: groups of proxies (clients or destinations) described by tags, each tag requiring a
// value or, negated, any other value. targetRef rules are built over them (docs/matching.md,
// targetRef rules).
import { SERVICE_TAG, type TagMap, type TargetRef } from '@mesh/model';

export interface SubsetTag {
  readonly key: string;
  readonly value: string;
  /** The tag's key has any value but this one. */
  readonly not: boolean;
}

/** The proxies with every tag; the empty subset is every proxy. */
export type Subset = readonly SubsetTag[];

const positive = (key: string, value: string): SubsetTag => ({ key, value, not: false });

/** Tags in key order, as a subset: the destination or client they describe. */
export const subsetOfTags = (tags: TagMap): Subset =>
  Object.keys(tags)
    .sort()
    .map((key) => positive(key, tags[key] ?? ''));

/**
 * The subset a `to` or `from` entry's targetRef names. Only these four kinds can be written
 * there (validation), so any other gives undefined and the entry is left out.
 */
export function subsetOfTargetRef(ref: TargetRef): Subset | undefined {
  const tags = Object.keys(ref.tags ?? {})
    .sort()
    .map((key) => positive(key, ref.tags?.[key] ?? ''));
  switch (ref.kind) {
    case 'Mesh':
      return [];
    case 'MeshSubset':
      return tags;
    case 'MeshService':
      return [positive(SERVICE_TAG, ref.name ?? '')];
    case 'MeshServiceSubset':
      return [positive(SERVICE_TAG, ref.name ?? ''), ...tags];
    default:
      return undefined;
  }
}

/** Whether every tag value `tag` admits is one `of` admits (same key). */
function tagCovers(of: SubsetTag, tag: SubsetTag): boolean {
  if (of.key !== tag.key) return false;
  if (of.not === tag.not) return of.value === tag.value;
  // `!a` covers `b` when a and b differ; `a` never covers `!b`.
  return of.not ? of.value !== tag.value : false;
}

/** Whether `other` lies within `subset`: the empty subset holds every other. */
export function isSubset(subset: Subset, other: Subset): boolean {
  if (subset.length === 0) return true;
  for (const tag of subset) {
    const sameKey = other.filter((candidate) => candidate.key === tag.key);
    if (sameKey.length === 0) return false;
    if (!sameKey.every((candidate) => tagCovers(tag, candidate))) return false;
  }
  return true;
}

/**
 * Whether two subsets may share a proxy, decided as the reference does: the first positive tag
 * of `a` whose key `b` lacks settles it as true, so the answer depends on the order of `a`'s tags
 * (ours are in key order, the service first for a service).
 */
export function intersects(a: Subset, b: Subset): boolean {
  if (a.length === 0 || b.length === 0) return true;
  for (const tag of a) {
    if (tag.not) continue;
    const others = b.filter((candidate) => !candidate.not && candidate.key === tag.key);
    if (others.length === 0) return true;
    if (others.some((other) => other.value !== tag.value)) return false;
  }
  return true;
}

export const numPositive = (subset: Subset): number => subset.filter((tag) => !tag.not).length;

/**
 * Every consistent subset over some tags, each tag either kept or negated, in the reference's
 * order: tags are bits of a counter (the first tag the lowest, negated = 1) counted from 1 up,
 * the all-positive combination last; combinations with two positive values of one key are
 * skipped, and a key with no positive value keeps all its negations. `tags` must be sorted by
 * key (then value), so the tags of a key are neighbours.
 */
export function subsetCombinations(tags: readonly SubsetTag[]): Subset[] {
  const groups: SubsetTag[][] = [];
  for (const tag of tags) {
    const last = groups[groups.length - 1];
    if (last && last[0]?.key === tag.key) last.push(tag);
    else groups.push([tag]);
  }
  // A group's digit d < size keeps its value at index size-1-d positive (the counter's smaller
  // values first); d = size negates them all.
  const digits = groups.map(() => 0);
  const combinationOf = (): Subset =>
    groups.flatMap((group, at): SubsetTag[] => {
      const digit = digits[at] ?? 0;
      if (digit === group.length) return group.map((tag) => ({ ...tag, not: true }));
      const kept = group[group.length - 1 - digit];
      return kept ? [{ ...kept, not: false }] : [];
    });
  const combinations: Subset[] = [];
  for (;;) {
    combinations.push(combinationOf());
    let at = 0;
    while (at < groups.length && digits[at] === (groups[at]?.length ?? 0)) digits[at++] = 0;
    if (at === groups.length) break;
    digits[at] = (digits[at] ?? 0) + 1;
  }
  // The all-positive combination comes first in counting order when every key has one value;
  // the reference reaches it last.
  if (groups.length > 0 && groups.every((group) => group.length === 1)) combinations.push(combinations.shift() as Subset);
  return combinations;
}
