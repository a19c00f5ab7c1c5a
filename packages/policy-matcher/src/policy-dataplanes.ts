// The per-policy views (docs/insights.md, Inspection): which dataplanes a policy applies to, and where.
import type { TagMap } from '@mesh/model';
import { type Attachment, attachmentsOfPolicy } from './attachments.js';
import { matchGateway } from './gateway.js';
import { gatewayAttachmentsOfPolicy, type GatewayPolicyAttachment, type ResourceKeyEntry } from './gateway-inspection.js';
import { matchProxy } from './match-policies.js';
import { type PolicyIndex, policyIndexOf } from './policy-index.js';
import { ownServicesOf, proxyMatches, proxyViewOf } from './proxy.js';
import { maySelect, policyReach } from './reach.js';
import { compileSelector } from './selector.js';
import type { DataplaneResource, MeshSnapshot, PolicyKind, PolicyOf, PolicySpecs } from './snapshot.js';

export interface SidecarPolicyItem {
  readonly kind: 'SidecarDataplane';
  readonly dataplane: ResourceKeyEntry;
  readonly attachments: readonly Attachment[];
}

export interface GatewayPolicyItem extends GatewayPolicyAttachment {
  readonly kind: 'MeshGatewayDataplane';
  readonly dataplane: ResourceKeyEntry;
}

export type PolicyDataplaneItem = SidecarPolicyItem | GatewayPolicyItem;

const byName = (a: DataplaneResource, b: DataplaneResource): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The items of `/meshes/{mesh}/{policy-path}/{name}/dataplanes`: for each dataplane (by name)
 * where the policy wins somewhere, where it attaches. An unknown policy gives no items. Dataplanes
 * the policy cannot reach are skipped without matching.
 */
export function dataplanesSelectedBy(kind: PolicyKind, name: string, dataplanes: readonly DataplaneResource[], snapshot: MeshSnapshot | PolicyIndex): PolicyDataplaneItem[] {
  const index = policyIndexOf(snapshot);
  const policy = index.kind(kind).byName.get(name)?.policy;
  if (!policy) return [];
  const reach = policyReach(kind, policy.spec);
  return [...dataplanes].sort(byName).flatMap((dataplane): PolicyDataplaneItem[] => {
    const proxy = proxyViewOf(dataplane.spec, index.snapshot);
    if (!maySelect(reach, ownServicesOf(proxy))) return [];
    const key = { mesh: dataplane.mesh, name: dataplane.name };
    if (proxy.isBuiltinGateway) {
      const attachment = gatewayAttachmentsOfPolicy(matchGateway(dataplane, index), kind, name);
      return attachment ? [{ kind: 'MeshGatewayDataplane', dataplane: key, ...attachment }] : [];
    }
    const attachments = attachmentsOfPolicy(matchProxy(dataplane, proxy, index), kind, name);
    return attachments.length > 0 ? [{ kind: 'SidecarDataplane', dataplane: key, attachments }] : [];
  });
}

/**
 * Builtin gateway dataplanes a MeshGateway selects (`meshgateways/{name}/dataplanes`), whether
 * or not it wins there: no selectors, an empty selector or one matching the dataplane.
 */
export function dataplanesMatchingGateway(gateway: PolicyOf<'MeshGateway'>, dataplanes: readonly DataplaneResource[]): DataplaneResource[] {
  const selectors = (gateway.spec.selectors ?? []).map((selector) => compileSelector(selector.match));
  return dataplanes.filter((dataplane) => {
    if (dataplane.spec.networking?.gateway?.type !== 'BUILTIN') return false;
    const proxy = proxyViewOf(dataplane.spec, {});
    return selectors.length === 0 || selectors.some((selector) => proxyMatches(proxy, selector));
  });
}

type SelectorList = ReadonlyArray<{ match?: TagMap | undefined }> | undefined;

/**
 * Whether any selector of a policy matches a dataplane, without ranking (the
 * `_resources/dataplanes` view): selectors of selector policies, else sources and destinations.
 */
export function matchesAnySelector<K extends PolicyKind>(spec: PolicySpecs[K], dataplane: DataplaneResource): boolean {
  const fields = spec as { sources?: SelectorList; destinations?: SelectorList; selectors?: SelectorList };
  const proxy = proxyViewOf(dataplane.spec, {});
  const selectors = fields.selectors ?? [...(fields.sources ?? []), ...(fields.destinations ?? [])];
  return selectors.some((selector) => proxyMatches(proxy, compileSelector(selector.match)));
}
