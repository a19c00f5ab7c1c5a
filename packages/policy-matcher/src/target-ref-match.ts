// The targetRef policies of one proxy and the rules they merge into, per kind (docs/matching.md,
// targetRef policies): proxy-wide rules, rules per inbound over client subsets, and rules over
// destination subsets. A renderer reads, per kind, the conf of the proxy, of each inbound's
// clients and of each outbound's destination.
import { type HttpRouteRule, SERVICE_TAG, type TagMap, type TargetRef, type TargetRefPolicyKind, type TcpRouteRule, targetRefPolicyKinds } from '@mesh/model';
import type { MergeOptions } from './target-ref-merge.js';
import {
  type AnyTargetRefPolicy,
  namesReferTo,
  RULE_MATCHES_HASH_TAG,
  ruleMatchesHash,
  TARGET_REF_POLICY_KIND_NAMES,
  type TargetRefIndex,
  targetRefIndexOf,
  type TargetRefPolicyOf,
  type TargetRefPolicySpecs,
  type TargetRefSnapshot,
} from './target-ref-policies.js';
import { buildRules, computeRule, type Rule, type RuleEntry } from './target-ref-rules.js';
import { type InboundListener, listenerKey, selectedListeners, type TargetRefProxy } from './target-ref-select.js';
import { selectorMatches } from './selector.js';
import { subsetOfTags, subsetOfTargetRef } from './target-ref-subset.js';

type EntryOf<Spec> = Spec extends { to?: ReadonlyArray<infer Entry> | undefined } ? Entry : Spec extends { from?: ReadonlyArray<infer Entry> | undefined } ? Entry : never;

/**
 * The conf rules of a kind carry: the `default` of its entries (or of the policy, for proxy-wide
 * kinds); a MeshHTTPRoute destination's rules under `Rules` (null for none); a MeshTCPRoute
 * destination's first rule (or all traffic to the destination itself).
 */
export type TargetRefConfOf<K extends TargetRefPolicyKind> = K extends 'MeshHTTPRoute'
  ? { Rules: HttpRouteRule[] | null }
  : K extends 'MeshTCPRoute'
    ? TcpRouteRule
    : TargetRefPolicySpecs[K] extends { default: infer Conf }
      ? Conf
      : EntryOf<TargetRefPolicySpecs[K]> extends { default: infer Conf }
        ? Conf
        : never;

export type TargetRefRule<Conf = unknown> = Rule<AnyTargetRefPolicy> & { readonly conf: Conf };

/** The rules of one inbound (or gateway listener) over the clients calling it. */
export interface InboundRules<Conf = unknown> extends InboundListener {
  readonly rules: readonly TargetRefRule<Conf>[];
}

export interface TargetRefRules<K extends TargetRefPolicyKind = TargetRefPolicyKind> {
  readonly kind: K;
  /** The policies selecting the proxy: least specific top-level targetRef first, then by name. */
  readonly policies: readonly TargetRefPolicyOf<K>[];
  /** Kinds configuring the proxy as a whole (no `to`, no `from`): one rule, for all traffic, or none. */
  readonly singleItem: readonly TargetRefRule<TargetRefConfOf<K>>[];
  /** Kinds with `from` entries: per selected inbound or listener, in the proxy's order. */
  readonly from: readonly InboundRules<TargetRefConfOf<K>>[];
  /** Kinds with `to` entries: over destinations, most specific first. */
  readonly to: readonly TargetRefRule<TargetRefConfOf<K>>[];
}

export interface TargetRefMatch {
  readonly proxy: TargetRefProxy;
  /** Kinds with at least one policy selecting the proxy, by kind name. */
  readonly kinds: readonly TargetRefRules[];
}

const SECTIONS = new Map(targetRefPolicyKinds().map((kind) => [kind.name, kind.targetRefPolicy ?? { from: false, to: false }]));

interface Entry {
  readonly targetRef: TargetRef;
  readonly default?: unknown;
}

type HttpRouteTo = EntryOf<TargetRefPolicySpecs['MeshHTTPRoute']>;
type TcpRouteTo = EntryOf<TargetRefPolicySpecs['MeshTCPRoute']>;

/**
 * The route kinds' destinations carry rules instead of a `default`: what their conf is, and how
 * confs of one destination merge (HTTP rules by their matches).
 */
const ROUTE_ENTRIES: { readonly [K in TargetRefPolicyKind]?: { conf(entry: EntryOf<TargetRefPolicySpecs[K]>): unknown; merge?: MergeOptions } } = {
  MeshHTTPRoute: { conf: (entry: HttpRouteTo) => ({ Rules: entry.rules ?? null }), merge: { byKey: { list: 'Rules', key: 'matches', conf: 'default' } } },
  MeshTCPRoute: { conf: (entry: TcpRouteTo) => entry.rules?.[0] ?? { default: { backendRefs: [{ ...entry.targetRef, weight: 1 }] } } },
};

function entryConf(kind: TargetRefPolicyKind, entry: Entry): unknown {
  // Read as taking any entry: a kind's own entries are the ones passed for it.
  const route: { conf(entry: Entry): unknown } | undefined = ROUTE_ENTRIES[kind];
  return route ? route.conf(entry) : entry.default;
}

const entriesOf = (policy: AnyTargetRefPolicy, section: 'to' | 'from'): readonly Entry[] => (policy.spec as { to?: readonly Entry[]; from?: readonly Entry[] })[section] ?? [];

function ruleEntry(kind: TargetRefPolicyKind, entry: Entry, policy: AnyTargetRefPolicy): RuleEntry<AnyTargetRefPolicy>[] {
  const subset = subsetOfTargetRef(entry.targetRef);
  return subset ? [{ subset, conf: entryConf(kind, entry), origin: policy }] : [];
}

/** The last route a name refers to, in store order (as the reference resolves a route's rules). */
const lastReferencedRoute = (policy: AnyTargetRefPolicy, routes: readonly TargetRefPolicyOf<'MeshHTTPRoute'>[]) =>
  [...routes].reverse().find((route) => route.mesh === policy.mesh && namesReferTo(policy.mesh, policy.spec.targetRef.name ?? '', route.name));

/**
 * The `to` entries of a policy as rule entries. A policy targeting a MeshHTTPRoute configures
 * that route's traffic: each of its entries applies to every rule of every destination of the
 * route, the destination's service with a tag naming the rule's matches.
 */
function toEntries(kind: TargetRefPolicyKind, policy: AnyTargetRefPolicy, routes: readonly TargetRefPolicyOf<'MeshHTTPRoute'>[]): RuleEntry<AnyTargetRefPolicy>[] {
  const entries = entriesOf(policy, 'to');
  if (policy.spec.targetRef.kind !== 'MeshHTTPRoute') return entries.flatMap((entry) => ruleEntry(kind, entry, policy));
  const route = lastReferencedRoute(policy, routes);
  return (route?.spec.to ?? []).flatMap((destination) =>
    (destination.rules ?? []).flatMap((rule) => {
      const targetRef: TargetRef = { kind: 'MeshServiceSubset', name: destination.targetRef.name, tags: { [RULE_MATCHES_HASH_TAG]: ruleMatchesHash(rule.matches) }, mesh: undefined };
      return entries.flatMap((entry) => ruleEntry(kind, { ...entry, targetRef }, policy));
    }),
  );
}

/**
 * Rules built per index: entries come from the policies alone (and the routes of the index), so
 * proxies selected by the same policies share them (read-only), as every proxy a mesh-wide
 * policy selects does.
 */
const builtRules = new WeakMap<TargetRefIndex, Map<string, Rule<AnyTargetRefPolicy>[]>>();

function sharedRules(index: TargetRefIndex, key: string, build: () => Rule<AnyTargetRefPolicy>[]): Rule<AnyTargetRefPolicy>[] {
  let byKey = builtRules.get(index);
  if (!byKey) builtRules.set(index, (byKey = new Map<string, Rule<AnyTargetRefPolicy>[]>()));
  let rules = byKey.get(key);
  if (!rules) byKey.set(key, (rules = build()));
  return rules;
}

const policiesKey = (kind: TargetRefPolicyKind, section: string, policies: readonly AnyTargetRefPolicy[]): string =>
  `${kind}\u0000${section}\u0000${policies.map((policy) => policy.name).join('\u0000')}`;

function rulesOfKind<K extends TargetRefPolicyKind>(kind: K, proxy: TargetRefProxy, index: TargetRefIndex): TargetRefRules<K> | undefined {
  // Inbounds then gateway listeners, one per address and port.
  const byListener = new Map<string, { listener: InboundListener; policies: TargetRefPolicyOf<K>[] }>();
  for (const listener of [...proxy.inbounds, ...proxy.gatewayListeners]) {
    const key = listenerKey(listener);
    if (!byListener.has(key)) byListener.set(key, { listener: { address: listener.address, port: listener.port, tags: listener.tags }, policies: [] });
  }
  const selected: TargetRefPolicyOf<K>[] = [];
  for (const policy of index.ranked(kind)) {
    const listeners = selectedListeners(policy, proxy, index.routes);
    if (listeners.length === 0) continue;
    selected.push(policy);
    for (const listener of listeners) byListener.get(listenerKey(listener))?.policies.push(policy);
  }
  if (selected.length === 0) return undefined;
  const sections = SECTIONS.get(kind) ?? { from: false, to: false };
  const merge = ROUTE_ENTRIES[kind]?.merge ?? {};
  // Every policy of the kind K is one of the union's members.
  const policies = selected as readonly TargetRefPolicyOf<TargetRefPolicyKind>[] as readonly AnyTargetRefPolicy[];
  const listenerPolicies = (entry: { policies: TargetRefPolicyOf<K>[] }) => entry.policies as readonly TargetRefPolicyOf<TargetRefPolicyKind>[] as readonly AnyTargetRefPolicy[];
  const build = (section: string, contributing: readonly AnyTargetRefPolicy[], entries: () => RuleEntry<AnyTargetRefPolicy>[]) =>
    sharedRules(index, policiesKey(kind, section, contributing), () => buildRules(entries(), merge)) as TargetRefRule<TargetRefConfOf<K>>[];
  return {
    kind,
    policies: selected,
    singleItem:
      sections.from || sections.to ? [] : build('single', policies, () => policies.map((policy) => ({ subset: [], conf: (policy.spec as { default?: unknown }).default, origin: policy }))),
    from: sections.from
      ? [...byListener.values()]
          .filter((entry) => entry.policies.length > 0)
          .map((entry) => ({
            ...entry.listener,
            rules: build('from', listenerPolicies(entry), () => listenerPolicies(entry).flatMap((policy) => entriesOf(policy, 'from').flatMap((from) => ruleEntry(kind, from, policy)))),
          }))
      : [],
    to: sections.to ? build('to', policies, () => policies.flatMap((policy) => toEntries(kind, policy, index.routes))) : [],
  };
}

/**
 * The targetRef policies selecting a proxy and their rules, for every kind with at least one.
 * Pass the same snapshot object (or its index) for every proxy of a mesh.
 */
export function matchTargetRefPolicies(proxy: TargetRefProxy, policies: TargetRefSnapshot | TargetRefIndex): TargetRefMatch {
  const index = targetRefIndexOf(policies);
  return { proxy, kinds: TARGET_REF_POLICY_KIND_NAMES.flatMap((kind) => rulesOfKind(kind, proxy, index) ?? []) };
}

/** The rules of one kind for a proxy; undefined when no policy of the kind selects it. */
export const targetRefRulesOf = <K extends TargetRefPolicyKind>(match: TargetRefMatch, kind: K): TargetRefRules<K> | undefined =>
  match.kinds.find((rules) => rules.kind === kind) as TargetRefRules<K> | undefined;

/** The conf for the proxy as a whole (proxy-wide kinds). */
export const proxyConf = <K extends TargetRefPolicyKind>(rules: TargetRefRules<K>): TargetRefConfOf<K> | undefined => rules.singleItem[0]?.conf;

/** The conf for traffic to a destination of these tags (an outbound's): the most specific rule holding them. */
export const destinationConf = <K extends TargetRefPolicyKind>(rules: TargetRefRules<K>, tags: TagMap): TargetRefConfOf<K> | undefined =>
  computeRule(rules.to, subsetOfTags(tags))?.conf;

/** The rules of the clients of one inbound or gateway listener. */
export const inboundRulesOf = <K extends TargetRefPolicyKind>(rules: TargetRefRules<K>, address: string, port: number): readonly TargetRefRule<TargetRefConfOf<K>>[] =>
  rules.from.find((inbound) => inbound.address === address && inbound.port === port)?.rules ?? [];

/** Whether a targetRef names a service of these tags (a zone egress has no proxy tags to select by). */
function selectsService(targetRef: TargetRef, tags: TagMap): boolean {
  switch (targetRef.kind) {
    case 'Mesh':
      return true;
    case 'MeshSubset':
      return selectorMatches(targetRef.tags, tags);
    case 'MeshService':
      return targetRef.name === tags[SERVICE_TAG];
    case 'MeshServiceSubset':
      return targetRef.name === tags[SERVICE_TAG] && selectorMatches(targetRef.tags, tags);
    default:
      return false;
  }
}

/**
 * The rules a zone egress applies to traffic for a service of these tags, over the clients
 * (docs/matching.md, Zone egress). A kind with `from` entries: those of the policies whose
 * top-level targetRef selects the service. A kind with `to` entries: each entry selecting the
 * service, as if the policy's top-level targetRef were a client of it. None for kinds with both
 * or neither.
 */
export function zoneEgressRulesOf<K extends TargetRefPolicyKind>(kind: K, tags: TagMap, policies: TargetRefSnapshot | TargetRefIndex): readonly TargetRefRule<TargetRefConfOf<K>>[] {
  const sections = SECTIONS.get(kind) ?? { from: false, to: false };
  if (sections.from === sections.to) return [];
  const ranked = targetRefIndexOf(policies).ranked(kind) as readonly TargetRefPolicyOf<TargetRefPolicyKind>[] as readonly AnyTargetRefPolicy[];
  const entries = sections.from
    ? ranked.filter((policy) => selectsService(policy.spec.targetRef, tags)).flatMap((policy) => entriesOf(policy, 'from').flatMap((from) => ruleEntry(kind, from, policy)))
    : ranked.flatMap((policy) =>
        entriesOf(policy, 'to')
          .filter((to) => selectsService(to.targetRef, tags))
          .flatMap((to) => ruleEntry(kind, { targetRef: policy.spec.targetRef, default: to.default }, policy)),
      );
  return buildRules(entries, ROUTE_ENTRIES[kind]?.merge ?? {}) as TargetRefRule<TargetRefConfOf<K>>[];
}
