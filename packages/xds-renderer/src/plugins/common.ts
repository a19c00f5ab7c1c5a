// What the targetRef policy modules share (docs/policies.md, What each policy does to the proxy):
// the proxy's generated resources, the rules of a kind and the subsets they are asked about, the
// listeners of the inbounds and outbounds, and small edits of filter chains, routes and clusters.
import { formatDurationNanos, parseDurationNanos, PROTOCOL_TAG, SERVICE_TAG, type TargetRefPolicyKind } from '@mesh/model';
import {
  computeRule,
  type InboundMatch,
  type OutboundMatch,
  type Subset,
  type TargetRefConfOf,
  type TargetRefMatch,
  type TargetRefRule,
  type TargetRefRules,
} from '@mesh/policy-matcher';
import { type Cluster, FILTER, HTTP_PROTOCOL_OPTIONS_KEY, type JsonObject, type JsonValue, type Listener } from '../envoy.js';
import { splitHostPort } from '../mesh-context.js';
import { gatewayListenerOf, inboundListenerName, outboundListenerName } from '../names.js';
import { parseProtocol, type Protocol } from '../protocol.js';
import { protocolOfServices, type ProxyState } from '../proxy-state.js';
import { type Entry, ORIGIN, type ResourceSet } from '../resource-set.js';

export interface PluginInput {
  readonly state: ProxyState;
  readonly resources: ResourceSet;
  readonly match: TargetRefMatch;
}

/** What one kind's module does to the resources, given the kind's rules for the proxy. */
export type Plugin<K extends TargetRefPolicyKind> = (input: PluginInput, rules: TargetRefRules<K>) => void;

export type Rules<K extends TargetRefPolicyKind> = readonly TargetRefRule<TargetRefConfOf<K>>[];

// --- Subsets and confs ---------------------------------------------------------------------

/** Every proxy (clients or destinations alike). */
export const MESH_SUBSET: Subset = [];

/** The destinations (or clients) of a service. */
export const meshServiceSubset = (service: string): Subset => [{ key: SERVICE_TAG, value: service, not: false }];

/** The merged conf of the first (most specific) rule holding the subset. */
export const confOf = <C>(rules: readonly TargetRefRule<C>[], subset: Subset): C | undefined => computeRule(rules, subset)?.conf;

/**
 * The `from` rules of an inbound; undefined when no policy of the kind selects it (some modules
 * then apply the kind's defaults, as the reference does for a missing entry).
 */
export function inboundRulesAt<K extends TargetRefPolicyKind>(rules: TargetRefRules<K>, address: string, port: number): Rules<K> | undefined {
  return rules.from.find((inbound) => inbound.address === address && inbound.port === port)?.rules;
}

// --- Where policies apply ------------------------------------------------------------------

export interface InboundSite {
  readonly inbound: InboundMatch;
  readonly protocol: Protocol;
  readonly listener: Entry<Listener>;
}

/** The dataplane's inbounds that have a listener, in spec order. */
export function inboundSites(input: PluginInput): InboundSite[] {
  const count = input.state.spec.networking?.inbound?.length ?? 0;
  return input.state.policies.inbounds.slice(0, count).flatMap((inbound): InboundSite[] => {
    const listener = input.resources.listeners.get(inboundListenerName(inbound.interface.dataplaneIp, inbound.interface.dataplanePort));
    return listener && listener.origin === ORIGIN.inbound ? [{ inbound, protocol: parseProtocol(inbound.tags[PROTOCOL_TAG]), listener }] : [];
  });
}

export interface OutboundSite {
  readonly outbound: OutboundMatch;
  readonly host: string;
  readonly port: number;
  readonly service: string;
  /** The outbound's listener, when one was generated. */
  readonly listener: Entry<Listener> | undefined;
}

/** Every outbound of the proxy (VIP outbounds too), with its listener if any. */
export function outboundSites(input: PluginInput): OutboundSite[] {
  return input.state.policies.outbounds.map((outbound) => {
    const { host, port } = splitHostPort(outbound.name) ?? { host: '', port: 0 };
    const listener = input.resources.listeners.get(outboundListenerName(host, port));
    return { outbound, host, port, service: outbound.service, listener: listener?.origin === ORIGIN.outbound ? listener : undefined };
  });
}

/** The protocol of a service as its endpoints declare it (all of them must agree). */
export const serviceProtocol = (state: ProxyState, service: string): Protocol => protocolOfServices(state, [service]);

/** The service a cluster name belongs to: a split cluster ends in `-` and 16 hex digits. */
export function serviceOfClusterName(name: string): string {
  const split = /^(.*)-[0-9a-fA-F]{16}$/.exec(name);
  return split ? (split[1] ?? name) : name;
}

/**
 * The outbound clusters of the services the proxy's outbounds name, each with its service: the
 * service's own cluster and its split clusters.
 */
export function clustersOfOutboundServices(input: PluginInput): Array<{ cluster: Cluster; service: string }> {
  const services = new Set(input.state.policies.outbounds.map((outbound) => outbound.service));
  return input.resources.clusters
    .ofOrigin(ORIGIN.outbound)
    .map((entry) => ({ cluster: entry.resource, service: serviceOfClusterName(entry.name) }))
    .filter(({ service }) => services.has(service));
}

export interface GatewayListenerSite {
  readonly listener: Entry<Listener>;
  readonly port: number;
  /** The MeshGateway listener's protocol, as a protocol of the mesh (`HTTPS` speaks `http`, `TLS` `tcp`). */
  readonly protocol: Protocol;
  /** Its route configuration (HTTP and HTTPS listeners), sent over RDS under the listener's name. */
  readonly routeConfig: JsonObject | undefined;
}

const GATEWAY_PROTOCOLS: Readonly<Record<string, Protocol>> = { HTTP: 'http', HTTPS: 'http', TCP: 'tcp', TLS: 'tcp' };

/** A builtin gateway's listeners (`<gateway>:<PROTOCOL>:<port>`), each with its route configuration. */
export function gatewayListenerSites(input: PluginInput): GatewayListenerSite[] {
  // Sidecars have none: their renders skip the walk over every listener.
  if (!input.state.policies.isBuiltinGateway) return [];
  return input.resources.listeners.ofOrigin(ORIGIN.gateway).map((listener) => {
    const { protocol = '', port = 0 } = gatewayListenerOf(listener.name) ?? {};
    const routeConfig = input.resources.routes.get(listener.name);
    return { listener, port, protocol: GATEWAY_PROTOCOLS[protocol] ?? 'unknown', routeConfig: routeConfig?.origin === ORIGIN.gateway ? routeConfig.resource : undefined };
  });
}

/** The protocol a cluster was built to speak upstream: HTTP/1.1 or HTTP/2 by its explicit options, else TCP. */
function upstreamProtocolOf(cluster: Cluster): Protocol {
  const options = isObject(cluster.typedExtensionProtocolOptions) ? cluster.typedExtensionProtocolOptions[HTTP_PROTOCOL_OPTIONS_KEY] : undefined;
  const explicit = isObject(options) && isObject(options.explicitHttpConfig) ? options.explicitHttpConfig : undefined;
  if (explicit?.http2ProtocolOptions !== undefined) return 'http2';
  return explicit?.httpProtocolOptions !== undefined ? 'http' : 'tcp';
}

/** A builtin gateway's destination clusters, each with its service and the protocol it speaks upstream (a TCP route's is TCP). */
export function gatewayClusters(input: PluginInput): Array<{ cluster: Cluster; service: string; protocol: Protocol }> {
  if (!input.state.policies.isBuiltinGateway) return [];
  return input.resources.clusters.ofOrigin(ORIGIN.gateway).map((entry) => ({ cluster: entry.resource, service: serviceOfClusterName(entry.name), protocol: upstreamProtocolOf(entry.resource) }));
}

// --- JSON of Envoy resources ---------------------------------------------------------------

export const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A list field of an object, created empty when absent. */
export function listOf(object: JsonObject, key: string): JsonValue[] {
  const value = object[key];
  if (Array.isArray(value)) return value;
  const list: JsonValue[] = [];
  object[key] = list;
  return list;
}

export const objectsOf = (value: JsonValue | undefined): JsonObject[] => (Array.isArray(value) ? value.filter(isObject) : []);

export const filterChainsOf = (listener: JsonObject): JsonObject[] => objectsOf(listener.filterChains);

/** The typed configs of the chain's filters of a name. */
const typedConfigsOf = (chain: JsonObject, filterName: string): JsonObject[] =>
  objectsOf(chain.filters).flatMap((filter) => (filter.name === filterName && isObject(filter.typedConfig) ? [filter.typedConfig] : []));

/** Edits every HTTP connection manager of a filter chain. */
export function updateHttpConnectionManager(chain: JsonObject, edit: (hcm: JsonObject) => void): void {
  for (const hcm of typedConfigsOf(chain, FILTER.httpConnectionManager)) edit(hcm);
}

/** Edits every TCP proxy of a filter chain. */
export function updateTcpProxy(chain: JsonObject, edit: (proxy: JsonObject) => void): void {
  for (const proxy of typedConfigsOf(chain, FILTER.tcpProxy)) edit(proxy);
}

/** The routes of an HTTP connection manager's inline route configuration. */
export function routesOfRouteConfig(routeConfig: JsonValue | undefined): JsonObject[] {
  if (!isObject(routeConfig)) return [];
  return objectsOf(routeConfig.virtualHosts).flatMap((virtualHost) => objectsOf(virtualHost.routes));
}

/** Puts HTTP filters right before the router, which ends every chain. */
export function insertBeforeRouter(hcm: JsonObject, ...filters: JsonObject[]): void {
  const httpFilters = listOf(hcm, 'httpFilters');
  const router = httpFilters.findIndex((filter) => isObject(filter) && filter.name === FILTER.router);
  httpFilters.splice(router < 0 ? httpFilters.length : router, 0, ...filters);
}

export const hasHttpFilter = (hcm: JsonObject, name: string): boolean => objectsOf(hcm.httpFilters).some((filter) => filter.name === name);

// --- Values --------------------------------------------------------------------------------

/** A Go duration of a conf (`1h0m0s`) as proto3 JSON writes a Duration (`3600s`). */
export const protoDuration = (duration: string): string => formatDurationNanos(parseDurationNanos(duration) ?? 0);

/** A percentage or factor written as an integer or a decimal text. */
export const decimalValue = (value: number | string): number => (typeof value === 'number' ? value : Number(value));
