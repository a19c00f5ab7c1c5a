// What inspection shows of a proxy's targetRef policies (docs/insights.md, Inspection): the items
// of `/rules`, the proxy-wide attachment of `/policies`, and the proxies a policy selects.
import { createHash } from 'node:crypto';
import { SERVICE_TAG, type TagMap, type TargetRefPolicyKind } from '@mesh/model';
import type { Attachment, AttachmentPolicies } from './attachments.js';
import type { ResourceKeyEntry } from './gateway-inspection.js';
import type { PolicyDataplaneItem } from './policy-dataplanes.js';
import type { TargetRefMatch, TargetRefRule } from './target-ref-match.js';
import type { AnyTargetRefPolicy } from './target-ref-policies.js';
import { computeRule } from './target-ref-rules.js';
import { listenerKey } from './target-ref-select.js';
import { type Subset, subsetOfTags } from './target-ref-subset.js';

/** The API's spelling of the reference's `ClientSubset`, `DestinationSubset` and `SingleItem`. */
export type RuleItemType = 'clientSubset' | 'destinationSubset' | 'singleItem';

/** One item of `/meshes/{mesh}/dataplanes/{name}/rules`; empty fields are left out. */
export interface RuleItem {
  readonly type: RuleItemType;
  /** The cluster name of the inbound's or destination's tags. */
  readonly name?: string;
  readonly addresses?: readonly string[];
  readonly service?: string;
  readonly tags?: TagMap;
  readonly policyType: TargetRefPolicyKind;
  /** The clients or destinations of the rule, a negated value written `!value`. */
  readonly subset: Readonly<Record<string, string>>;
  readonly conf: unknown;
  readonly origins: readonly ResourceKeyEntry[];
}

/** The DNS names of a virtual IP, listed before the IP among a destination's addresses. */
export interface VipDomains {
  readonly address: string;
  readonly domains: readonly string[];
}

/**
 * The name inspection gives a tag set: the service alone, or the service and the first 8 bytes
 * (hex) of a SHA-256 of every key and value in key order.
 */
function clusterNameOf(tags: TagMap): string {
  const service = tags[SERVICE_TAG] ?? '';
  // Without a service there is no cluster (the reference fails there): the item goes without a name.
  if (service === '') return '';
  const keys = Object.keys(tags).sort();
  if (keys.length === 1) return service;
  const hash = createHash('sha256');
  for (const key of keys) hash.update(key).update(tags[key] ?? '');
  return `${service}-${hash.digest('hex').slice(0, 16)}`;
}

/** A subset as a tag map; of two tags of one key, the later one shows. */
const subsetText = (subset: Subset): Record<string, string> => Object.fromEntries(subset.map((tag) => [tag.key, tag.not ? `!${tag.value}` : tag.value]));

const originsOf = (rule: TargetRefRule): ResourceKeyEntry[] => rule.origins.map(({ mesh, name }) => ({ mesh, name }));

function item(type: RuleItemType, where: { name?: string; addresses?: string[]; service?: string | undefined; tags?: TagMap }, policyType: TargetRefPolicyKind, rule: TargetRefRule): RuleItem {
  return {
    type,
    ...(where.name ? { name: where.name } : {}),
    ...(where.addresses && where.addresses.length > 0 ? { addresses: where.addresses } : {}),
    ...(where.service ? { service: where.service } : {}),
    ...(where.tags && Object.keys(where.tags).length > 0 ? { tags: where.tags } : {}),
    policyType,
    subset: subsetText(rule.subset),
    conf: rule.conf,
    origins: originsOf(rule),
  };
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The items of `/rules`: per kind, one `clientSubset` item per rule of each inbound, one
 * `destinationSubset` item per distinct destination cluster of the outbounds (with every address
 * of it: DNS names of a virtual IP, then `ip:port`), one `singleItem` for the proxy-wide rule.
 * Sorted by name, then type; kinds by name and rules in their order otherwise.
 */
export function listRuleItems(match: TargetRefMatch, vipDomains: readonly VipDomains[] = []): RuleItem[] {
  const domainsOf = new Map<string, string[]>();
  for (const { address, domains } of vipDomains) domainsOf.set(address, [...(domainsOf.get(address) ?? []), ...domains]);
  const items: RuleItem[] = [];
  for (const rules of match.kinds) {
    for (const inbound of rules.from) {
      const where = { name: clusterNameOf(inbound.tags), addresses: [listenerKey(inbound)], service: inbound.tags[SERVICE_TAG], tags: inbound.tags };
      for (const rule of inbound.rules) items.push(item('clientSubset', where, rules.kind, rule));
    }
    const destinations = new Map<string, { rule: TargetRefRule; tags: TagMap; addresses: string[] }>();
    for (const outbound of match.proxy.outbounds) {
      const name = clusterNameOf(outbound.tags);
      let destination = destinations.get(name);
      if (!destination) {
        const rule = computeRule(rules.to, subsetOfTags(outbound.tags));
        if (!rule) continue;
        destinations.set(name, (destination = { rule, tags: outbound.tags, addresses: [] }));
      }
      for (const address of [...(domainsOf.get(outbound.address) ?? []).map((domain) => `${domain}:${outbound.port}`), listenerKey(outbound)]) {
        if (!destination.addresses.includes(address)) destination.addresses.push(address);
      }
    }
    for (const [name, { rule, tags, addresses }] of destinations) items.push(item('destinationSubset', { name, addresses, service: tags[SERVICE_TAG], tags }, rules.kind, rule));
    const single = rules.singleItem[0];
    if (single) items.push(item('singleItem', {}, rules.kind, single));
  }
  // Stable: the order above decides among equal names and types.
  return items.sort((a, b) => byText(a.name ?? '', b.name ?? '') || byText(a.type, b.type));
}

/** The `/policies` items with the targetRef policies added to the proxy-wide (`dataplane`) attachment, each kind's policies in their order. */
export function withTargetRefPolicies<P>(
  items: readonly AttachmentPolicies<P>[],
  match: TargetRefMatch,
  present: (policy: AnyTargetRefPolicy, kind: TargetRefPolicyKind) => P,
): Array<Attachment & { readonly matchedPolicies: Readonly<Record<string, readonly P[]>> }> {
  if (match.kinds.length === 0) return [...items];
  const targetRef = Object.fromEntries(match.kinds.map((rules) => [rules.kind, rules.policies.map((policy) => present(policy as AnyTargetRefPolicy, rules.kind))]));
  const proxyWide = items.find((attachment) => attachment.type === 'dataplane');
  const matchedPolicies: Record<string, readonly P[]> = { ...proxyWide?.matchedPolicies, ...targetRef };
  const sorted = Object.fromEntries(Object.keys(matchedPolicies).sort().map((kind) => [kind, matchedPolicies[kind] ?? []]));
  // The proxy-wide attachment sorts first.
  return [{ type: 'dataplane', matchedPolicies: sorted }, ...items.filter((attachment) => attachment !== proxyWide)];
}

/**
 * The item of `/{policy-path}/{name}/dataplanes` for a proxy a targetRef policy selects: it
 * attaches to the proxy as a whole (a builtin gateway: to the whole gateway); undefined when it
 * does not select the proxy.
 */
export function targetRefPolicyDataplaneItem(match: TargetRefMatch, builtinGateway: boolean, kind: TargetRefPolicyKind, name: string): PolicyDataplaneItem | undefined {
  const selecting = match.kinds.find((rules) => rules.kind === kind)?.policies.some((policy) => policy.name === name);
  if (!selecting) return undefined;
  const dataplane = { mesh: match.proxy.dataplane.mesh, name: match.proxy.dataplane.name };
  if (!builtinGateway) return { kind: 'SidecarDataplane', dataplane, attachments: [{ type: 'dataplane' }] };
  const gateway = match.proxy.gateway;
  return { kind: 'MeshGatewayDataplane', dataplane, gateway: { mesh: gateway?.mesh ?? '', name: gateway?.name ?? '' } };
}
