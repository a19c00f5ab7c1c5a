// The selection rules (docs/matching.md), over the service-keyed buckets of a kind.
import { SERVICE_TAG, type TagMap } from '@mesh/model';
import { beats, type Candidate, type IndexedPolicy, type KindIndex, type SelectorRef, type ServiceBuckets } from './policy-index.js';
import { type ProxyView, proxyMatches } from './proxy.js';
import { combineRanks, compareRanks, NO_RANK, type Rank, selectorMatches } from './selector.js';
import { compareInstants, type PolicyKind } from './snapshot.js';

/** The unpinned references, then those pinned to each of the services. */
function* refsFor<K extends PolicyKind>(buckets: ServiceBuckets<K>, services: Iterable<string | undefined>): Generator<SelectorRef<K>> {
  yield* buckets.unpinned;
  for (const service of services) {
    if (service !== undefined) yield* buckets.byService.get(service) ?? [];
  }
}

/** ProxyTemplate, TrafficTrace, MeshGateway (docs/matching.md, Proxy policies): the most specific selector matching one tag set of the proxy. */
export function selectDataplanePolicy<K extends PolicyKind>(index: KindIndex<K>, proxy: ProxyView, services: Iterable<string>): IndexedPolicy<K> | undefined {
  let best: Candidate<K> | undefined;
  for (const { entry, selector } of refsFor(index.selectors, services)) {
    if (!proxyMatches(proxy, selector)) continue;
    const candidate = { entry, rank: selector.rank };
    if (beats(candidate, best)) best = candidate;
  }
  return best?.entry;
}

/**
 * The best rank among a policy's sources matching the proxy, per policy, computed once per proxy
 * and shared by every outbound-side kind.
 */
export class SourceRanks {
  private readonly ranks = new Map<IndexedPolicy, Rank | null>();

  constructor(private readonly proxy: ProxyView) {}

  of(entry: IndexedPolicy): Rank | undefined {
    let rank = this.ranks.get(entry);
    if (rank === undefined) {
      rank = null;
      for (const source of entry.sources) {
        if (proxyMatches(this.proxy, source) && (rank === null || compareRanks(source.rank, rank) > 0)) rank = source.rank;
      }
      this.ranks.set(entry, rank);
    }
    return rank ?? undefined;
  }
}

/**
 * Outbound-side policies (docs/matching.md, Outbound policies): per destination service, the policy whose matching source and
 * destination ranks add up highest. Only destinations of nothing but the service tag can match.
 */
export function selectPerService<K extends PolicyKind>(index: KindIndex<K>, sourceRanks: SourceRanks, services: Iterable<string>): Map<string, IndexedPolicy<K>> {
  const consider = (refs: Iterable<SelectorRef<K>>, best: Candidate<K> | undefined): Candidate<K> | undefined => {
    for (const { entry, selector } of refs) {
      const sourceRank = sourceRanks.of(entry);
      if (sourceRank === undefined) continue;
      const candidate = { entry, rank: combineRanks(selector.rank, sourceRank) };
      if (beats(candidate, best)) best = candidate;
    }
    return best;
  };
  // Unpinned destinations (`*` or empty) match every service: their best is the same for all.
  const bestUnpinned = consider(index.outboundDestinations.unpinned, undefined);
  const winners = new Map<string, IndexedPolicy<K>>();
  for (const service of services) {
    if (winners.has(service)) continue;
    const best = consider(index.outboundDestinations.byService.get(service) ?? [], bestUnpinned);
    if (best) winners.set(service, best.entry);
  }
  return winners;
}

/** TrafficPermission (docs/matching.md, Inbound policies): the most specific destination matching the tags; sources play no part. */
export function selectForTags<K extends PolicyKind>(index: KindIndex<K>, tags: TagMap): IndexedPolicy<K> | undefined {
  let best: Candidate<K> | undefined;
  for (const { entry, selector } of refsFor(index.inboundDestinations, [tags[SERVICE_TAG]])) {
    // An empty destination never wins in the reference (its rank ties the starting rank).
    if (selector.isEmpty || !selectorMatches(selector.tags, tags)) continue;
    const candidate = { entry, rank: selector.rank };
    if (beats(candidate, best)) best = candidate;
  }
  return best?.entry;
}

const firstSourceRank = (entry: IndexedPolicy): Rank => entry.sources[0]?.rank ?? NO_RANK;

/**
 * FaultInjection and inbound RateLimit (docs/matching.md, Inbound policies): every policy with a destination matching the tags,
 * once per matching destination, most specific first source first, then newest, then by name.
 */
export function selectAllForTags<K extends PolicyKind>(index: KindIndex<K>, tags: TagMap): IndexedPolicy<K>[] {
  const matches = new Map<IndexedPolicy<K>, number>();
  for (const { entry, selector } of refsFor(index.inboundDestinations, [tags[SERVICE_TAG]])) {
    if (selectorMatches(selector.tags, tags)) matches.set(entry, (matches.get(entry) ?? 0) + 1);
  }
  const ordered = [...matches.keys()].sort(
    (a, b) => compareRanks(firstSourceRank(b), firstSourceRank(a)) || compareInstants(b.created, a.created) || a.ordinal - b.ordinal,
  );
  return ordered.flatMap((entry) => Array<IndexedPolicy<K>>(matches.get(entry) ?? 0).fill(entry));
}
