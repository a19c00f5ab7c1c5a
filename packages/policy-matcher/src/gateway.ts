// Builtin gateways (docs/matching.md, Builtin gateways): the MeshGateway of a gateway dataplane, its listeners (one per port),
// their virtual hosts with the MeshGatewayRoutes that apply, the route table of each host and
// the connection policies of every route destination.
import { type MeshGatewaySpec, SERVICE_TAG, type TagMap } from '@mesh/model';
import {
  GATEWAY_CONNECTION_POLICY_KINDS,
  type GatewayConnectionPolicyKind,
  type GatewayDestination,
  type GatewayDestinationPolicies,
  type GatewayRouteEntry,
  routeTableOf,
} from './gateway-route-table.js';
import { beats, type Candidate, type IndexedPolicy, type PolicyIndex, policyIndexOf } from './policy-index.js';
import { ownServicesOf, PASS_THROUGH_SERVICE, proxyViewOf } from './proxy.js';
import { selectDataplanePolicy, selectPerService, SourceRanks } from './select.js';
import { combineRanks, firstMatchingRank, selectorMatches } from './selector.js';
import type { DataplaneResource, MeshSnapshot, PolicyOf } from './snapshot.js';

type MeshGatewayListener = NonNullable<NonNullable<MeshGatewaySpec['conf']>['listeners']>[number];
export type GatewayProtocol = NonNullable<MeshGatewayListener['protocol']> | 'NONE';
export const WILDCARD_HOSTNAME = '*';

export interface GatewayHost {
  readonly hostname: string;
  /** The dataplane's gateway tags, the gateway's and the listener's, merged in that order. */
  readonly tags: TagMap;
  readonly tls?: MeshGatewayListener['tls'];
  /** The routes serving this host (after hostname matching), by name. */
  readonly routes: readonly PolicyOf<'MeshGatewayRoute'>[];
  /** Most specific match first. */
  readonly entries: readonly GatewayRouteEntry[];
}

export interface GatewayListener {
  readonly port: number;
  readonly protocol: GatewayProtocol;
  readonly crossMesh: boolean;
  readonly resources?: MeshGatewayListener['resources'];
  /** In reverse hostname order, so exact names come before wildcards and `*` is last. */
  readonly hosts: readonly GatewayHost[];
}

export interface GatewayMatch {
  readonly dataplane: { readonly mesh: string; readonly name: string };
  readonly gateway?: PolicyOf<'MeshGateway'>;
  /** One per port, by port. */
  readonly listeners: readonly GatewayListener[];
  /** The `pass_through` TrafficLog, applied to the whole gateway. */
  readonly trafficLog?: PolicyOf<'TrafficLog'>;
  readonly trafficTrace?: PolicyOf<'TrafficTrace'>;
  /** The services the gateway is known by. */
  readonly ownServices: ReadonlySet<string>;
  /** The services of every route destination. */
  readonly reachedServices: ReadonlySet<string>;
}

type RankedPolicies = ReadonlyMap<GatewayConnectionPolicyKind, readonly Candidate[]>;

/** A host while listeners are collapsed and wildcard routes redistributed. */
interface HostDraft {
  readonly hostname: string;
  readonly tags: TagMap;
  readonly tls: MeshGatewayListener['tls'];
  readonly routes: readonly PolicyOf<'MeshGatewayRoute'>[];
  /** Connection policies whose first matching source matches the host's tags, with that rank. */
  readonly policies: RankedPolicies;
}

const routeHostnames = (route: PolicyOf<'MeshGatewayRoute'>): readonly string[] => route.spec.conf?.http?.hostnames ?? [];

/** HTTP routes go to HTTP(S) listeners, TCP routes to TCP and TLS ones. */
function servesProtocol(route: PolicyOf<'MeshGatewayRoute'>, protocol: GatewayProtocol): boolean {
  if (route.spec.conf?.http) return protocol === 'HTTP' || protocol === 'HTTPS';
  if (route.spec.conf?.tcp) return protocol === 'TCP' || protocol === 'TLS';
  return false;
}

function splitHostname(name: string): { host: string; domain: string } {
  const dot = name.indexOf('.');
  return dot < 0 ? { host: name, domain: '' } : { host: name.slice(0, dot), domain: name.slice(dot + 1) };
}

/** Equal names, or one side is `*.<domain>` and the domains are equal (one label of wildcard). */
export function hostnameMatches(target: string, names: readonly string[]): boolean {
  const wanted = splitHostname(target);
  return names.some((name) => {
    if (name === target) return true;
    const other = splitHostname(name);
    if (wanted.host === WILDCARD_HOSTNAME || other.host === WILDCARD_HOSTNAME) return wanted.domain === other.domain;
    return wanted.host === other.host && wanted.domain === other.domain;
  });
}

const byRouteName = (a: PolicyOf<'MeshGatewayRoute'>, b: PolicyOf<'MeshGatewayRoute'>): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function uniqueRoutes(routes: readonly PolicyOf<'MeshGatewayRoute'>[]): PolicyOf<'MeshGatewayRoute'>[] {
  return [...new Map(routes.map((route) => [route.name, route])).values()].sort(byRouteName);
}

/**
 * Moves the wildcard host's routes that name hostnames onto hosts of those names, creating them
 * from the wildcard host (without its routes) when missing; a `*.domain` name also lands on every
 * host then known that ends in `domain`. Routes are handled in name order. As in the reference,
 * a created host gets none of the wildcard host's routes without hostnames.
 */
function redistributeWildcardRoutes(hosts: readonly HostDraft[]): HostDraft[] {
  const byName = new Map(hosts.map((host) => [host.hostname, host]));
  const original = byName.get(WILDCARD_HOSTNAME);
  if (!original) return [...hosts];
  let wildcard: HostDraft = { ...original, routes: [] };
  const addRoute = (host: HostDraft, route: PolicyOf<'MeshGatewayRoute'>) => byName.set(host.hostname, { ...host, routes: [...host.routes, route] });
  for (const route of original.routes) {
    const names = routeHostnames(route);
    if (names.length === 0) {
      wildcard = { ...wildcard, routes: [...wildcard.routes, route] };
      continue;
    }
    for (const name of names) {
      addRoute(byName.get(name) ?? { ...wildcard, hostname: name, routes: [] }, route);
      if (!name.startsWith('*.')) continue;
      const suffix = name.slice(2);
      for (const host of [...byName.values()]) if (host.hostname.endsWith(suffix)) addRoute(host, route);
    }
  }
  byName.set(WILDCARD_HOSTNAME, wildcard);
  return [...byName.values()].map((host) => ({ ...host, routes: uniqueRoutes(host.routes) }));
}

/** The most specific policy of a kind for a destination: source rank plus the first matching destination's rank. */
function destinationPolicies(tags: TagMap, policies: RankedPolicies): GatewayDestinationPolicies {
  const result: { [K in GatewayConnectionPolicyKind]?: PolicyOf<K> } = {};
  for (const kind of GATEWAY_CONNECTION_POLICY_KINDS) {
    let best: Candidate | undefined;
    for (const { entry, rank } of policies.get(kind) ?? []) {
      const destinationRank = firstMatchingRank(entry.destinations, tags);
      if (destinationRank === undefined) continue;
      const candidate = { entry, rank: combineRanks(destinationRank, rank) };
      if (beats(candidate, best)) best = candidate;
    }
    if (best) Object.assign(result, { [kind]: best.entry.policy });
  }
  return result;
}

/** The route table of a host, each destination with its connection policies. */
function routeEntriesOf(host: HostDraft, routes: readonly PolicyOf<'MeshGatewayRoute'>[]): GatewayRouteEntry[] {
  const withPolicies = (destination: GatewayDestination): GatewayDestination => ({ ...destination, policies: destinationPolicies(destination.tags, host.policies) });
  return routeTableOf(routes).map((entry) => ({
    ...entry,
    forwards: entry.forwards.map(withPolicies),
    ...(entry.mirror ? { mirror: { ...entry.mirror, destination: withPolicies(entry.mirror.destination) } } : {}),
  }));
}

/** The wildcard host takes every route; others those without hostnames or with a matching one. */
const routesServing = (host: HostDraft): PolicyOf<'MeshGatewayRoute'>[] =>
  host.routes.filter((route) => {
    const names = routeHostnames(route);
    return host.hostname === WILDCARD_HOSTNAME || names.length === 0 || hostnameMatches(host.hostname, names);
  });

function listenerHosts(index: PolicyIndex, listeners: readonly MeshGatewayListener[], protocol: GatewayProtocol, baseTags: TagMap): HostDraft[] {
  const routes = index.kind('MeshGatewayRoute').entries;
  const hosts = new Map<string, HostDraft>();
  for (const listener of listeners) {
    const tags = { ...baseTags, ...listener.tags };
    const attached = routes
      .filter(({ policy }) => (policy.spec.selectors ?? []).some((selector) => selectorMatches(selector.match, tags)))
      .map(({ policy }) => policy)
      .filter((route) => servesProtocol(route, protocol));
    const policies = new Map(
      GATEWAY_CONNECTION_POLICY_KINDS.map((kind) => [
        kind,
        index.kind(kind).entries.flatMap((entry: IndexedPolicy) => {
          const rank = firstMatchingRank(entry.sources, tags);
          return rank ? [{ entry, rank }] : [];
        }),
      ]),
    );
    const hostname = listener.hostname || WILDCARD_HOSTNAME;
    hosts.set(hostname, { hostname, tags, tls: listener.tls, routes: attached, policies });
  }
  return redistributeWildcardRoutes([...hosts.values()]);
}

function listenersOf(index: PolicyIndex, gateway: PolicyOf<'MeshGateway'>, dataplaneGatewayTags: TagMap): GatewayListener[] {
  const byPort = new Map<number, MeshGatewayListener[]>();
  for (const listener of gateway.spec.conf?.listeners ?? []) {
    const port = listener.port ?? 0;
    const sharing = byPort.get(port);
    if (sharing) sharing.push(listener);
    else byPort.set(port, [listener]);
  }
  const baseTags = { ...dataplaneGatewayTags, ...gateway.spec.tags };
  return [...byPort]
    .sort(([a], [b]) => a - b)
    .map(([port, listeners]) => {
      // Listeners sharing a port agree on protocol and limits (validation): the first one speaks for all.
      const first = listeners[0];
      const protocol: GatewayProtocol = first?.protocol ?? 'NONE';
      const hosts = listenerHosts(index, listeners, protocol, baseTags)
        .sort((a, b) => (a.hostname < b.hostname ? 1 : a.hostname > b.hostname ? -1 : 0))
        .map((host): GatewayHost => {
          const routes = routesServing(host);
          return { hostname: host.hostname, tags: host.tags, ...(host.tls ? { tls: host.tls } : {}), routes, entries: routeEntriesOf(host, routes) };
        });
      return {
        port,
        protocol,
        crossMesh: first?.crossMesh ?? false,
        ...(first?.resources ? { resources: first.resources } : {}),
        hosts,
      };
    });
}

function reachedServicesOf(listeners: readonly GatewayListener[]): Set<string> {
  const services = new Set<string>();
  for (const listener of listeners) {
    for (const host of listener.hosts) {
      for (const entry of host.entries) {
        for (const destination of [...entry.forwards, ...(entry.mirror ? [entry.mirror.destination] : [])]) {
          const service = destination.tags[SERVICE_TAG];
          if (service !== undefined) services.add(service);
        }
      }
    }
  }
  return services;
}

/**
 * The gateway, listeners, hosts and routes of a builtin gateway dataplane, with the connection
 * policies of every route destination and the TrafficLog/TrafficTrace of the whole gateway.
 */
export function matchGateway(dataplane: DataplaneResource, snapshot: MeshSnapshot | PolicyIndex): GatewayMatch {
  const index = policyIndexOf(snapshot);
  const proxy = proxyViewOf(dataplane.spec, index.snapshot);
  const ownServices = ownServicesOf(proxy);
  const gateway = selectDataplanePolicy(index.kind('MeshGateway'), proxy, ownServices)?.policy;
  const trafficLog = selectPerService(index.kind('TrafficLog'), new SourceRanks(proxy), [PASS_THROUGH_SERVICE]).get(PASS_THROUGH_SERVICE)?.policy;
  const trafficTrace = selectDataplanePolicy(index.kind('TrafficTrace'), proxy, ownServices)?.policy;
  const listeners = gateway ? listenersOf(index, gateway, dataplane.spec.networking?.gateway?.tags ?? {}) : [];
  return {
    dataplane: { mesh: dataplane.mesh, name: dataplane.name },
    gateway,
    listeners,
    trafficLog,
    trafficTrace,
    ownServices,
    reachedServices: reachedServicesOf(listeners),
  };
}

/** The routes a gateway's route tables use (the `meshgatewayroutes/{name}/dataplanes` view). */
export function routesInUse(match: GatewayMatch): Set<string> {
  return new Set(match.listeners.flatMap((listener) => listener.hosts.flatMap((host) => host.entries.map((entry) => entry.route))));
}
