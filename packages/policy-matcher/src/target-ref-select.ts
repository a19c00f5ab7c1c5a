// Which proxies a targetRef policy selects (docs/matching.md, targetRef policies): its top-level
// targetRef picks inbounds of a proxy (or listeners of a builtin gateway); a proxy is selected
// when at least one is.
import { outboundTags, SERVICE_TAG, type TagMap, type TargetRef } from '@mesh/model';
import { type PolicyIndex, policyIndexOf } from './policy-index.js';
import { effectiveOutbounds, ownServicesOf, proxyViewOf } from './proxy.js';
import { selectDataplanePolicy } from './select.js';
import { selectorMatches, WILDCARD } from './selector.js';
import type { DataplaneResource, MeshSnapshot, PolicyOf } from './snapshot.js';
import { namesReferTo, type TargetingPolicy, type TargetRefPolicyOf } from './target-ref-policies.js';

/** Where a proxy takes traffic: an inbound of the dataplane, or a listener of its builtin gateway. */
export interface InboundListener {
  readonly address: string;
  readonly port: number;
  /** An inbound's tags; for a gateway listener the dataplane's gateway tags, the gateway's and the listener's, merged. */
  readonly tags: TagMap;
}

interface GatewayListener extends InboundListener {
  /** The listener's own tags, which a `MeshGateway` targetRef's tags select. */
  readonly ownTags: TagMap;
}

/** An outbound: the destination it names and the address it listens on. */
export interface OutboundListener {
  readonly address: string;
  readonly port: number;
  readonly tags: TagMap;
}

/** A proxy as targetRef matching sees it. */
export interface TargetRefProxy {
  readonly dataplane: { readonly mesh: string; readonly name: string };
  readonly inbounds: readonly InboundListener[];
  /** The MeshGateway of a builtin gateway proxy, if one selects it. */
  readonly gateway?: PolicyOf<'MeshGateway'>;
  readonly gatewayListeners: readonly GatewayListener[];
  /** Every outbound (VIP outbounds first for transparent proxies). */
  readonly outbounds: readonly OutboundListener[];
}

/**
 * The inbounds, gateway listeners and outbounds of a dataplane. `meshPolicies` gives the
 * MeshGateways (the one selecting a builtin gateway proxy lends it its listeners) and the VIP
 * outbounds. The mesh's metrics inbound is not one of them.
 */
export function targetRefProxyOf(dataplane: DataplaneResource, meshPolicies: MeshSnapshot | PolicyIndex): TargetRefProxy {
  const index = policyIndexOf(meshPolicies);
  const networking = dataplane.spec.networking;
  const address = networking?.address ?? '';
  const inbounds = (networking?.inbound ?? []).map((inbound) => ({ address: inbound.address || address, port: inbound.port ?? 0, tags: inbound.tags ?? {} }));
  const view = proxyViewOf(dataplane.spec, index.snapshot);
  // Only a builtin gateway proxy has listeners of its own; a MeshGateway selecting a sidecar lends it none.
  const gateway = view.isBuiltinGateway ? selectDataplanePolicy(index.kind('MeshGateway'), view, ownServicesOf(view))?.policy : undefined;
  const baseTags = { ...networking?.gateway?.tags, ...gateway?.spec.tags };
  const gatewayListeners = (gateway?.spec.conf?.listeners ?? []).map((listener) => ({
    address,
    port: listener.port ?? 0,
    tags: { ...baseTags, ...listener.tags },
    ownTags: listener.tags ?? {},
  }));
  const outbounds = effectiveOutbounds(dataplane.spec, view.inbounds, index.snapshot.vipOutbounds).map((outbound) => ({
    address: outbound.address || '127.0.0.1',
    port: outbound.port ?? 0,
    tags: outboundTags(outbound) ?? {},
  }));
  return { dataplane: { mesh: dataplane.mesh, name: dataplane.name }, inbounds, ...(gateway ? { gateway } : {}), gatewayListeners, outbounds };
}

/** The tags a targetRef of a proxy kind requires; undefined for the kinds that select otherwise. */
export function targetRefSelector(ref: TargetRef): TagMap | undefined {
  switch (ref.kind) {
    case 'Mesh':
      return {};
    case 'MeshSubset':
      return ref.tags ?? {};
    case 'MeshService':
      return { [SERVICE_TAG]: ref.name ?? '' };
    case 'MeshServiceSubset':
      return { [SERVICE_TAG]: ref.name ?? '', ...ref.tags };
    default:
      return undefined;
  }
}

/** The service a targetRef's tags require (not `*`), if any: only proxies of that service (and gateways) can be selected. */
export function targetRefService(ref: TargetRef): string | undefined {
  const service = targetRefSelector(ref)?.[SERVICE_TAG];
  return service === undefined || service === WILDCARD ? undefined : service;
}

/** The first route a name refers to, in store order. */
export const resolveRoute = (policy: TargetingPolicy, routes: readonly TargetRefPolicyOf<'MeshHTTPRoute'>[]): TargetRefPolicyOf<'MeshHTTPRoute'> | undefined =>
  routes.find((route) => route.mesh === policy.mesh && namesReferTo(policy.mesh, policy.spec.targetRef.name ?? '', route.name));

/**
 * The inbounds and gateway listeners a policy's top-level targetRef selects: by tags (`Mesh`,
 * `MeshSubset`, `MeshService`, `MeshServiceSubset`), by the gateway and its listeners' tags
 * (`MeshGateway`), or as the route it names does (`MeshHTTPRoute`; none when it names no route).
 */
export function selectedListeners(policy: TargetingPolicy, proxy: TargetRefProxy, routes: readonly TargetRefPolicyOf<'MeshHTTPRoute'>[]): InboundListener[] {
  const ref = policy.spec.targetRef;
  if (ref.kind === 'MeshGateway') {
    const gateway = proxy.gateway;
    if (!gateway || gateway.mesh !== policy.mesh || !namesReferTo(policy.mesh, ref.name ?? '', gateway.name)) return [];
    return proxy.gatewayListeners.filter((listener) => selectorMatches(ref.tags, listener.ownTags));
  }
  if (ref.kind === 'MeshHTTPRoute') {
    const route = resolveRoute(policy, routes);
    // A route targets proxies, never another route (validation): anything else selects nothing.
    return route && route.spec.targetRef.kind !== 'MeshHTTPRoute' ? selectedListeners(route, proxy, routes) : [];
  }
  const selector = targetRefSelector(ref);
  if (!selector) return [];
  return [...proxy.inbounds, ...proxy.gatewayListeners].filter((listener) => selectorMatches(selector, listener.tags));
}

/** Whether a policy selects a proxy (at least one of its inbounds or listeners). */
export const targetRefSelects = (policy: TargetingPolicy, proxy: TargetRefProxy, routes: readonly TargetRefPolicyOf<'MeshHTTPRoute'>[]): boolean =>
  selectedListeners(policy, proxy, routes).length > 0;

/** `address:port`, as the reference names an inbound listener (no brackets). */
export const listenerKey = (listener: { readonly address: string; readonly port: number }): string => `${listener.address}:${listener.port}`;
