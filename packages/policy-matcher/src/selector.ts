// Tag selectors and their rank: how specific a selector is, and how two ranks compare.
import { SERVICE_TAG, type TagMap } from '@mesh/model';

export const WILDCARD = '*';

/** How many tags of a selector match by value and how many by `*`. */
export interface Rank {
  readonly exact: number;
  readonly wildcard: number;
}

export const NO_RANK: Rank = { exact: 0, wildcard: 0 };

/** An empty selector matches everything; otherwise every key must be present with an equal value or `*`. */
export function selectorMatches(selector: TagMap | undefined, tags: TagMap | undefined): boolean {
  for (const key in selector) {
    const actual = tags !== undefined && Object.hasOwn(tags, key) ? tags[key] : undefined;
    if (actual === undefined) return false;
    const wanted = selector[key];
    if (wanted !== WILDCARD && wanted !== actual) return false;
  }
  return true;
}

export function rankOf(selector: TagMap | undefined): Rank {
  let exact = 0;
  let wildcard = 0;
  for (const key in selector) {
    if (selector[key] === WILDCARD) wildcard++;
    else exact++;
  }
  return { exact, wildcard };
}

/** Positive when `a` is more specific: more tags first, then more exact values (docs/matching.md, Selectors and rank). */
export function compareRanks(a: Rank, b: Rank): number {
  const totalA = a.exact + a.wildcard;
  const totalB = b.exact + b.wildcard;
  return totalA !== totalB ? totalA - totalB : a.exact - b.exact;
}

export const combineRanks = (a: Rank, b: Rank): Rank => ({ exact: a.exact + b.exact, wildcard: a.wildcard + b.wildcard });

/** A selector prepared once per policy: its rank and what the service-keyed indexes need. */
export interface CompiledSelector {
  readonly tags: TagMap;
  readonly rank: Rank;
  readonly isEmpty: boolean;
  /** The exact service the selector requires, if any (not `*`). */
  readonly service: string | undefined;
  /** No key but the service tag: the only selectors that can match an outbound's `{service}` tag set. */
  readonly onlyService: boolean;
}

export function compileSelector(tags: TagMap | undefined): CompiledSelector {
  const own = tags ?? {};
  const keys = Object.keys(own);
  const service = own[SERVICE_TAG];
  return {
    tags: own,
    rank: rankOf(own),
    isEmpty: keys.length === 0,
    service: service === undefined || service === WILDCARD ? undefined : service,
    onlyService: keys.every((key) => key === SERVICE_TAG),
  };
}

/** The rank of the first selector matching the tags (the reference's `MatchSelector`). */
export function firstMatchingRank(selectors: readonly CompiledSelector[], tags: TagMap): Rank | undefined {
  for (const selector of selectors) {
    if (selectorMatches(selector.tags, tags)) return selector.rank;
  }
  return undefined;
}

/** `k1=v1,k2=v2` with keys sorted: how the reference prints and orders destination tag sets. */
export const tagsText = (tags: TagMap): string =>
  Object.keys(tags)
    .sort()
    .map((key) => `${key}=${tags[key]}`)
    .join(',');
