// Rules: the confs of `to`, `from` or proxy-wide entries turned into one merged conf per subset
// of destinations or clients, with negations (docs/matching.md, targetRef rules).
import { mergeConfs, type MergeOptions } from './target-ref-merge.js';
import { intersects, isSubset, numPositive, type Subset, type SubsetTag, subsetCombinations } from './target-ref-subset.js';

/** One entry of a policy: the subset its targetRef names, its conf, and the policy it comes from. */
export interface RuleEntry<Origin> {
  readonly subset: Subset;
  readonly conf: unknown;
  readonly origin: Origin;
}

/** The merged conf for a subset, and the policies that contributed to it (by name). */
export interface Rule<Origin> {
  readonly subset: Subset;
  readonly conf: unknown;
  readonly origins: readonly Origin[];
}

interface Named {
  readonly mesh: string;
  readonly name: string;
}

/** Groups of entries whose subsets are connected by intersections, in the reference's order. */
function connectedComponents(subsets: readonly Subset[]): number[][] {
  const parent = subsets.map((_, at) => at);
  const root = (at: number): number => {
    while (parent[at] !== at) at = parent[at] as number;
    return at;
  };
  for (let i = 0; i < subsets.length; i++) {
    for (let j = 0; j < subsets.length; j++) {
      if (i === j) continue;
      if (intersects(subsets[i] as Subset, subsets[j] as Subset)) parent[root(i)] = root(j);
    }
  }
  const byRoot = new Map<number, number[]>();
  subsets.forEach((_, at) => {
    const key = root(at);
    const members = byRoot.get(key);
    if (members) members.push(at);
    else byRoot.set(key, [at]);
  });
  // Members ascending; components by their members' text, descending (as text: "9" > "10").
  const text = (members: number[]) => members.join(':');
  return [...byRoot.values()].sort((a, b) => (text(a) > text(b) ? -1 : text(a) < text(b) ? 1 : 0));
}

const byKeyThenValue = (a: SubsetTag, b: SubsetTag): number =>
  a.key !== b.key ? (a.key < b.key ? -1 : 1) : a.value < b.value ? -1 : a.value > b.value ? 1 : 0;

/**
 * The rules of some entries, most specific (most positive tags) first: entries whose subsets
 * intersect are grouped; for every combination of their tags, kept or negated, the entries whose
 * subset holds it are merged in order, later entries winning.
 */
export function buildRules<Origin extends Named>(entries: readonly RuleEntry<Origin>[], options: MergeOptions = {}): Rule<Origin>[] {
  const rules: Rule<Origin>[] = [];
  for (const component of connectedComponents(entries.map((entry) => entry.subset))) {
    const tags = new Map<string, SubsetTag>();
    for (const at of component) {
      for (const tag of entries[at]?.subset ?? []) tags.set(`${tag.not}\u0000${tag.key}\u0000${tag.value}`, tag);
    }
    for (const subset of subsetCombinations([...tags.values()].sort(byKeyThenValue))) {
      const applying = entries.filter((entry) => isSubset(entry.subset, subset));
      if (applying.length === 0) continue;
      const origins = new Map<string, Origin>();
      for (const { origin } of applying) origins.set(`${origin.mesh}\u0000${origin.name}`, origin);
      rules.push({
        subset,
        conf: mergeConfs(
          applying.map((entry) => entry.conf),
          options,
        ),
        origins: [...origins.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      });
    }
  }
  // Stable: equally specific rules keep their order.
  return rules.sort((a, b) => numPositive(b.subset) - numPositive(a.subset));
}

/** The rule for a subset: the first (most specific) whose subset holds it; undefined when none does. */
export function computeRule<R extends { readonly subset: Subset }>(rules: readonly R[], subset: Subset): R | undefined {
  return rules.find((rule) => isSubset(rule.subset, subset));
}
