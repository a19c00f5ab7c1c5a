// VirtualOutbound (docs/matching.md, VirtualOutbound): the extra host/port entries a service instance's tags produce.
import { evaluateVirtualOutboundHost, evaluateVirtualOutboundPort, type TagMap } from '@mesh/model';
import { beats, type Candidate, type PolicyIndex, policyIndexOf } from './policy-index.js';
import { compareRanks, type Rank, selectorMatches } from './selector.js';
import type { MeshSnapshot, PolicyOf } from './snapshot.js';

export interface VirtualOutboundEntry {
  readonly virtualOutbound: PolicyOf<'VirtualOutbound'>;
  readonly host: string;
  readonly port: number;
  /** The instance's tags the parameters read: the tag set the entry stands for. */
  readonly tags: TagMap;
}

/** Every VirtualOutbound with a non-empty selector matching the tags: best selector rank first, then newest, then by name. */
export function matchVirtualOutbounds(snapshot: MeshSnapshot | PolicyIndex, tags: TagMap): PolicyOf<'VirtualOutbound'>[] {
  const candidates: Candidate<'VirtualOutbound'>[] = [];
  for (const entry of policyIndexOf(snapshot).kind('VirtualOutbound').entries) {
    let best: Rank | undefined;
    for (const selector of entry.selectors) {
      if (!selector.isEmpty && selectorMatches(selector.tags, tags) && (best === undefined || compareRanks(selector.rank, best) > 0)) best = selector.rank;
    }
    if (best) candidates.push({ entry, rank: best });
  }
  return candidates.sort((a, b) => (beats(a, b) ? -1 : beats(b, a) ? 1 : 0)).map(({ entry }) => entry.policy);
}

/** The host/port entries of an instance's tags; templates rendering an invalid host or port are skipped. */
export function virtualOutboundEntries(snapshot: MeshSnapshot | PolicyIndex, tags: TagMap): VirtualOutboundEntry[] {
  return matchVirtualOutbounds(snapshot, tags).flatMap((virtualOutbound) => {
    const conf = virtualOutbound.spec.conf;
    if (!conf) return [];
    const host = evaluateVirtualOutboundHost(conf, tags);
    const port = evaluateVirtualOutboundPort(conf, tags);
    if (!host.ok || !port.ok) return [];
    const parameterTags: TagMap = {};
    for (const parameter of conf.parameters ?? []) {
      const key = parameter.tagKey || parameter.name || '';
      const value = Object.hasOwn(tags, key) ? tags[key] : undefined;
      if (value !== undefined) parameterTags[key] = value;
    }
    return [{ virtualOutbound, host: host.value, port: port.value, tags: parameterTags }];
  });
}
