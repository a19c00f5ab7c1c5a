// The inspection view of a builtin gateway's matches (docs/insights.md, Inspection): its items and where policies attach.
import type { TagMap } from '@mesh/model';
import type { GatewayHost, GatewayMatch, GatewayProtocol } from './gateway.js';
import { type GatewayConnectionPolicyKind, type GatewayDestination, isGatewayConnectionPolicyKind } from './gateway-route-table.js';
import { tagsText } from './selector.js';
import type { AnyPolicy, PolicyKind } from './snapshot.js';

export interface ResourceKeyEntry {
  readonly mesh: string;
  readonly name: string;
}

export interface DescribedDestination<P> {
  readonly tags: TagMap;
  readonly policies: Readonly<Partial<Record<GatewayConnectionPolicyKind, P>>>;
}

export interface GatewayListenerView<R> {
  readonly port: number;
  readonly protocol: GatewayProtocol;
  readonly hosts: ReadonlyArray<{ readonly hostName: string; readonly routes: readonly R[] }>;
}

export interface GatewayDescription<P = AnyPolicy> {
  readonly kind: 'MeshGatewayDataplane';
  /** Empty strings when no MeshGateway selects the dataplane. */
  readonly gateway: ResourceKeyEntry;
  readonly listeners: ReadonlyArray<GatewayListenerView<{ readonly route: string; readonly destinations: readonly DescribedDestination<P>[] }>>;
  /** TrafficLog (`pass_through`) and TrafficTrace apply to the whole gateway. */
  readonly policies?: Readonly<Partial<Record<'TrafficLog' | 'TrafficTrace', P>>>;
}

/** Where one policy attaches on a gateway; no listeners for the whole-gateway TrafficLog/TrafficTrace. */
export interface GatewayPolicyAttachment {
  readonly gateway: ResourceKeyEntry;
  readonly listeners?: ReadonlyArray<GatewayListenerView<{ readonly route: string; readonly destinations: readonly TagMap[] }>>;
}

const gatewayKeyOf = (match: GatewayMatch): ResourceKeyEntry => ({ mesh: match.gateway?.mesh ?? '', name: match.gateway?.name ?? '' });

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const identity = (policy: AnyPolicy): AnyPolicy => policy;

/**
 * A route's destinations as the reference lists them: per route table entry the mirror and the
 * last backend only (it rewrites the route's list for every backend), adding up over entries.
 */
function describeRoutes<P>(host: GatewayHost, present: (policy: AnyPolicy, kind: PolicyKind) => P) {
  const describe = (destination: GatewayDestination): DescribedDestination<P> => {
    const kinds = (Object.keys(destination.policies) as GatewayConnectionPolicyKind[]).sort();
    const policies = Object.fromEntries(kinds.flatMap((kind) => {
      const policy = destination.policies[kind];
      return policy ? [[kind, present(policy, kind)]] : [];
    }));
    return { tags: destination.tags, policies };
  };
  const routes = new Map<string, DescribedDestination<P>[]>();
  for (const entry of host.entries) {
    const destinations = [...(routes.get(entry.route) ?? []), ...(entry.mirror ? [describe(entry.mirror.destination)] : [])];
    const lastForward = entry.forwards.at(-1);
    if (lastForward) routes.set(entry.route, [...destinations, describe(lastForward)]);
  }
  return [...routes]
    .filter(([, destinations]) => destinations.length > 0)
    .sort(([a], [b]) => byText(a, b))
    .map(([route, destinations]) => ({
      route,
      destinations: destinations.map((d) => ({ d, text: tagsText(d.tags) })).sort((a, b) => byText(a.text, b.text)).map(({ d }) => d),
    }));
}

/** The `/meshes/{mesh}/dataplanes/{name}/policies` body of a builtin gateway; `present` turns a policy into its entity. */
export function describeGateway(match: GatewayMatch): GatewayDescription;
export function describeGateway<P>(match: GatewayMatch, present: (policy: AnyPolicy, kind: PolicyKind) => P): GatewayDescription<P>;
export function describeGateway<P>(match: GatewayMatch, present?: (policy: AnyPolicy, kind: PolicyKind) => P): GatewayDescription<P | AnyPolicy> {
  const show: (policy: AnyPolicy, kind: PolicyKind) => P | AnyPolicy = present ?? identity;
  const listeners = match.listeners.map((listener) => ({
    port: listener.port,
    protocol: listener.protocol,
    hosts: [...listener.hosts]
      .sort((a, b) => byText(a.hostname, b.hostname))
      .map((host) => ({ hostName: host.hostname, routes: describeRoutes(host, show) })),
  }));
  const policies = {
    ...(match.trafficLog ? { TrafficLog: show(match.trafficLog, 'TrafficLog') } : {}),
    ...(match.trafficTrace ? { TrafficTrace: show(match.trafficTrace, 'TrafficTrace') } : {}),
  };
  return { kind: 'MeshGatewayDataplane', gateway: gatewayKeyOf(match), listeners, ...(Object.keys(policies).length > 0 ? { policies } : {}) };
}

/** Where a policy attaches on a builtin gateway, or undefined when it does not apply to it. */
export function gatewayAttachmentsOfPolicy(match: GatewayMatch, kind: PolicyKind, name: string): GatewayPolicyAttachment | undefined {
  const gateway = gatewayKeyOf(match);
  if (kind === 'TrafficLog' || kind === 'TrafficTrace') {
    const whole = kind === 'TrafficLog' ? match.trafficLog : match.trafficTrace;
    return whole?.name === name ? { gateway } : undefined;
  }
  if (!isGatewayConnectionPolicyKind(kind)) return undefined;
  const carries = (destination: GatewayDestination): boolean => destination.policies[kind]?.name === name;
  const listeners = match.listeners.flatMap((listener) => {
    const hosts = listener.hosts.flatMap((host) => {
      // One item per route table entry, so a route can repeat, as in the reference.
      const routes = host.entries.flatMap((entry) => {
        const destinations = [...(entry.mirror ? [entry.mirror.destination] : []), ...entry.forwards].filter(carries).map((d) => d.tags);
        return destinations.length > 0 ? [{ route: entry.route, destinations }] : [];
      });
      return routes.length > 0 ? [{ hostName: host.hostname, routes }] : [];
    });
    return hosts.length > 0 ? [{ port: listener.port, protocol: listener.protocol, hosts }] : [];
  });
  return listeners.length > 0 ? { gateway, listeners } : undefined;
}
