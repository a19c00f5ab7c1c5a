// Policies of a mesh prepared for matching many proxies: selectors compiled once, and every
// selector filed under the exact service it names, so one proxy only looks at the policies that
// name its services plus those that do not name any service.
import type { TagMap } from '@mesh/model';
import { type CompiledSelector, compileSelector, compareRanks, type Rank } from './selector.js';
import { compareInstants, type Instant, instantOf, type MeshSnapshot, type PolicyKind, type PolicyOf } from './snapshot.js';

export interface IndexedPolicy<K extends PolicyKind = PolicyKind> {
  readonly policy: PolicyOf<K>;
  /** Position in name order: the reference's last tie-break (first name wins). */
  readonly ordinal: number;
  readonly created: Instant;
  readonly sources: readonly CompiledSelector[];
  readonly destinations: readonly CompiledSelector[];
  /** Selectors of selector policies; a policy without any gets one empty selector (matches all). */
  readonly selectors: readonly CompiledSelector[];
}

/** One selector of one policy. */
export interface SelectorRef<K extends PolicyKind = PolicyKind> {
  readonly entry: IndexedPolicy<K>;
  readonly selector: CompiledSelector;
}

/** Selector references filed by the exact service they require; `unpinned` require none. */
export interface ServiceBuckets<K extends PolicyKind> {
  readonly byService: ReadonlyMap<string, readonly SelectorRef<K>[]>;
  readonly unpinned: readonly SelectorRef<K>[];
}

export interface KindIndex<K extends PolicyKind = PolicyKind> {
  /** In name order. */
  readonly entries: readonly IndexedPolicy<K>[];
  readonly byName: ReadonlyMap<string, IndexedPolicy<K>>;
  /** Destinations that can match an outbound's `{service}` (nothing but the service tag). */
  readonly outboundDestinations: ServiceBuckets<K>;
  /** Every destination, matched against inbound (or external service) tags. */
  readonly inboundDestinations: ServiceBuckets<K>;
  /** Selectors of selector policies, matched against the proxy's tag sets. */
  readonly selectors: ServiceBuckets<K>;
}

export interface PolicyIndex {
  readonly snapshot: MeshSnapshot;
  kind<K extends PolicyKind>(kind: K): KindIndex<K>;
}

interface SelectionFields {
  sources?: ReadonlyArray<{ match?: TagMap | undefined }> | undefined;
  destinations?: ReadonlyArray<{ match?: TagMap | undefined }> | undefined;
  selectors?: ReadonlyArray<{ match?: TagMap | undefined }> | undefined;
}

const compileAll = (selectors: SelectionFields['sources']): CompiledSelector[] => (selectors ?? []).map((s) => compileSelector(s.match));

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function fileByService<K extends PolicyKind>(refs: Iterable<SelectorRef<K>>): ServiceBuckets<K> {
  const byService = new Map<string, SelectorRef<K>[]>();
  const unpinned: SelectorRef<K>[] = [];
  for (const ref of refs) {
    const service = ref.selector.service;
    if (service === undefined) {
      unpinned.push(ref);
      continue;
    }
    const bucket = byService.get(service);
    if (bucket) bucket.push(ref);
    else byService.set(service, [ref]);
  }
  return { byService, unpinned };
}

function* refsOf<K extends PolicyKind>(entries: readonly IndexedPolicy<K>[], pick: (entry: IndexedPolicy<K>) => readonly CompiledSelector[]) {
  for (const entry of entries) for (const selector of pick(entry)) yield { entry, selector };
}

function buildKindIndex<K extends PolicyKind>(policies: readonly PolicyOf<K>[]): KindIndex<K> {
  // A stable sort, like the reference's, so equal names keep their given order.
  const sorted = [...policies].sort((a, b) => byName(a, b));
  const entries = sorted.map((policy, ordinal): IndexedPolicy<K> => {
    const fields = policy.spec as SelectionFields;
    const selectors = compileAll(fields.selectors);
    return {
      policy,
      ordinal,
      created: instantOf(policy.creationTime),
      sources: compileAll(fields.sources),
      destinations: compileAll(fields.destinations),
      selectors: selectors.length > 0 ? selectors : [compileSelector(undefined)],
    };
  });
  const outbound = refsOf(entries, (entry) => entry.destinations.filter((selector) => selector.onlyService));
  return {
    entries,
    byName: new Map(entries.map((entry) => [entry.policy.name, entry])),
    outboundDestinations: fileByService(outbound),
    inboundDestinations: fileByService(refsOf(entries, (entry) => entry.destinations)),
    selectors: fileByService(refsOf(entries, (entry) => entry.selectors)),
  };
}

/** Builds the index of a snapshot; kinds are indexed on first use. */
export function indexPolicies(snapshot: MeshSnapshot): PolicyIndex {
  const kinds = new Map<PolicyKind, KindIndex>();
  return {
    snapshot,
    kind<K extends PolicyKind>(kind: K): KindIndex<K> {
      let index = kinds.get(kind) as KindIndex<K> | undefined;
      if (index === undefined) {
        index = buildKindIndex<K>(snapshot.policies[kind] ?? []);
        kinds.set(kind, index);
      }
      return index;
    },
  };
}

const indexes = new WeakMap<MeshSnapshot, PolicyIndex>();

/** The index of a snapshot, built once per snapshot object: callers replace the snapshot when the mesh changes. */
export function policyIndexOf(snapshot: MeshSnapshot | PolicyIndex): PolicyIndex {
  if ('kind' in snapshot) return snapshot;
  let index = indexes.get(snapshot);
  if (index === undefined) {
    index = indexPolicies(snapshot);
    indexes.set(snapshot, index);
  }
  return index;
}

/** A policy with the rank it matched by. */
export interface Candidate<K extends PolicyKind = PolicyKind> {
  readonly entry: IndexedPolicy<K>;
  readonly rank: Rank;
}

/**
 * Whether `a` beats `b`: higher rank, then newer, then earlier name (docs/matching.md, Which policy
 * wins). The reference walks policies
 * in name order and replaces its pick only on a higher rank or a strictly newer policy of equal
 * rank, which picks exactly this maximum.
 */
export function beats(a: Candidate, b: Candidate | undefined): boolean {
  if (b === undefined) return true;
  const byRank = compareRanks(a.rank, b.rank);
  if (byRank !== 0) return byRank > 0;
  const byTime = compareInstants(a.entry.created, b.entry.created);
  if (byTime !== 0) return byTime > 0;
  return a.entry.ordinal < b.entry.ordinal;
}
