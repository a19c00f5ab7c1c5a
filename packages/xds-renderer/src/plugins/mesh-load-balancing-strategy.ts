// MeshLoadBalancingStrategy (docs/policies.md): the load balancer of the outbounds' clusters, hash
// policies on their routes for ring hash and maglev, and locality awareness: endpoints of the
// local zone first, weighted by the tags they share with this proxy, then other zones in the
// order of the failover rules (each rule one priority lower), or through the zone egress.
import { createHash } from 'node:crypto';
import { type MeshLoadBalancingStrategyConf, ZONE_TAG } from '@mesh/model';
import { type Cluster, type ClusterLoadAssignment, type JsonObject, scalarText, TYPE } from '../envoy.js';
import { ORIGIN } from '../resource-set.js';
import {
  confOf,
  filterChainsOf,
  gatewayClusters,
  gatewayListenerSites,
  isObject,
  MESH_SUBSET,
  meshServiceSubset,
  objectsOf,
  outboundSites,
  type Plugin,
  type PluginInput,
  protoDuration,
  routesOfRouteConfig,
  serviceOfClusterName,
  updateHttpConnectionManager,
} from './common.js';

type Conf = MeshLoadBalancingStrategyConf;
type LoadBalancer = NonNullable<Conf['loadBalancer']>;
type HashPolicy = NonNullable<NonNullable<LoadBalancer['ringHash']>['hashPolicies']>[number];
type Failover = NonNullable<NonNullable<NonNullable<Conf['localityAwareness']>['crossZone']>['failover']>[number];

const DEFAULT_OVERPROVISIONING_FACTOR = 200;

// --- Hash policies on routes ---------------------------------------------------------------

function hashPolicyOf(policy: HashPolicy): JsonObject {
  let specifier: JsonObject;
  switch (policy.type) {
    case 'Header':
      specifier = { header: { headerName: policy.header?.name ?? '' } };
      break;
    case 'Cookie': {
      const cookie: JsonObject = { name: policy.cookie?.name ?? '' };
      if (policy.cookie?.ttl !== undefined) cookie.ttl = protoDuration(policy.cookie.ttl);
      if (policy.cookie?.path) cookie.path = policy.cookie.path;
      specifier = { cookie };
      break;
    }
    case 'SourceIP':
      specifier = { connectionProperties: policy.connection?.sourceIP ? { sourceIp: true } : {} };
      break;
    case 'QueryParameter':
      specifier = { queryParameter: { name: policy.queryParameter?.name ?? '' } };
      break;
    case 'FilterState':
      specifier = { filterState: { key: policy.filterState?.key ?? '' } };
      break;
  }
  return policy.terminal ? { ...specifier, terminal: true } : specifier;
}

/** Ring hash and maglev hash requests by the policies on each route; the other balancers need none. */
function addHashPolicies(routes: readonly JsonObject[], loadBalancer: LoadBalancer | undefined): void {
  const hashPolicies = loadBalancer?.type === 'RingHash' ? loadBalancer.ringHash?.hashPolicies : loadBalancer?.type === 'Maglev' ? loadBalancer.maglev?.hashPolicies : undefined;
  if (hashPolicies === undefined) return;
  for (const route of routes) {
    if (!isObject(route.route)) continue;
    const policies = Array.isArray(route.route.hashPolicy) ? route.route.hashPolicy : [];
    route.route.hashPolicy = [...policies, ...hashPolicies.map(hashPolicyOf)];
  }
}

/** The hash policies on the routes of the listener's first chain. */
function configureHashPolicies(listener: JsonObject, loadBalancer: LoadBalancer | undefined): void {
  const [chain] = filterChainsOf(listener);
  if (!chain) return;
  updateHttpConnectionManager(chain, (hcm) => addHashPolicies(routesOfRouteConfig(hcm.routeConfig), loadBalancer));
}

// --- The cluster's load balancer -----------------------------------------------------------

const LB_CONFIGS = ['ringHashLbConfig', 'maglevLbConfig', 'originalDstLbConfig', 'leastRequestLbConfig', 'roundRobinLbConfig'];

/** Sets one member of the cluster's `lb_config`, clearing the others. */
function setLbConfig(cluster: Cluster, key: string, config: JsonObject): void {
  for (const other of LB_CONFIGS) delete cluster[other];
  cluster[key] = config;
}

function configureLoadBalancer(cluster: Cluster, loadBalancer: LoadBalancer): void {
  switch (loadBalancer.type) {
    case 'RoundRobin':
      // ROUND_ROBIN is the enum's zero value.
      delete cluster.lbPolicy;
      break;
    case 'LeastRequest': {
      cluster.lbPolicy = 'LEAST_REQUEST';
      const choiceCount = loadBalancer.leastRequest?.choiceCount;
      if (choiceCount !== undefined) setLbConfig(cluster, 'leastRequestLbConfig', { choiceCount });
      break;
    }
    case 'Random':
      cluster.lbPolicy = 'RANDOM';
      break;
    case 'RingHash': {
      cluster.lbPolicy = 'RING_HASH';
      const ringHash = loadBalancer.ringHash;
      if (!ringHash) break;
      // uint64 wrappers are strings in proto3 JSON.
      const config: JsonObject = {};
      if (ringHash.minRingSize !== undefined) config.minimumRingSize = String(ringHash.minRingSize);
      if (ringHash.maxRingSize !== undefined) config.maximumRingSize = String(ringHash.maxRingSize);
      if (ringHash.hashFunction === 'MurmurHash2') config.hashFunction = 'MURMUR_HASH_2';
      setLbConfig(cluster, 'ringHashLbConfig', config);
      break;
    }
    case 'Maglev': {
      cluster.lbPolicy = 'MAGLEV';
      const tableSize = loadBalancer.maglev?.tableSize;
      if (tableSize !== undefined) setLbConfig(cluster, 'maglevLbConfig', { tableSize: String(tableSize) });
      break;
    }
  }
}

function configureCluster(cluster: Cluster, conf: Conf): void {
  // Affinity tags weigh the local zone's localities against each other.
  if (conf.localityAwareness?.localZone?.affinityTags?.length) {
    const common: JsonObject = isObject(cluster.commonLbConfig) ? cluster.commonLbConfig : {};
    delete common.zoneAwareLbConfig;
    common.localityWeightedLbConfig = {};
    cluster.commonLbConfig = common;
  }
  if (conf.loadBalancer) configureLoadBalancer(cluster, conf.loadBalancer);
}

// --- Locality awareness --------------------------------------------------------------------

interface Locality {
  readonly zone: string;
  readonly subZone: string;
  readonly weight: number;
  readonly priority: number;
}

interface LocalGroup {
  readonly key: string;
  readonly value: string;
  readonly weight: number;
}

interface CrossZoneGroup {
  readonly type: Failover['to']['type'];
  readonly zones: ReadonlySet<string>;
  readonly priority: number;
}

/**
 * The proxy's values of the affinity tags, each with its weight: given, or 9 * 10^(n - i - 1)
 * for the i-th of n tags, so the first gets 90% of the traffic and the weights add up to a power of 10.
 */
function localGroups(conf: Conf, proxyTags: ReadonlyMap<string, readonly string[]>): LocalGroup[] {
  const affinity = conf.localityAwareness?.localZone?.affinityTags ?? [];
  return affinity.flatMap((tag, at): LocalGroup[] => {
    const value = proxyTags.get(tag.key)?.[0];
    return value === undefined ? [] : [{ key: tag.key, value, weight: tag.weight ?? 9 * 10 ** (affinity.length - at - 1) }];
  });
}

/** The failover rules that apply to this zone; each takes the priority of its place in the list (plus one). */
function crossZoneGroups(conf: Conf, localZone: string): CrossZoneGroup[] {
  const failover = conf.localityAwareness?.crossZone?.failover ?? [];
  return failover.flatMap((rule, at): CrossZoneGroup[] => {
    if (rule.from && !rule.from.zones.includes(localZone)) return [];
    return [{ type: rule.to.type, zones: new Set(rule.to.zones ?? []), priority: at + 1 }];
  });
}

function crossZoneLocality(groups: readonly CrossZoneGroup[], zone: string): Locality | undefined {
  for (const group of groups) {
    const applies = group.type === 'Any' || (group.type === 'AnyExcept' && !group.zones.has(zone)) || (group.type === 'Only' && group.zones.has(zone));
    if (applies) return { zone, subZone: '', weight: 0, priority: group.priority };
  }
  return undefined;
}

/** Traffic to other zones through the zone egress: one locality named after the failover rules. */
function egressLocality(groups: readonly CrossZoneGroup[]): Locality {
  const sortedZones = (zones: ReadonlySet<string>) => [...zones].sort().join(',');
  let description = '';
  for (const group of groups) {
    if (group.type === 'Only') description += `${group.priority}:${sortedZones(group.zones)};`;
    else if (group.type === 'Any') description += `${group.priority}:${group.type};`;
    else if (group.type === 'AnyExcept') description += `${group.priority}:${group.type}:${sortedZones(group.zones)};`;
  }
  return { zone: `egress_${createHash('sha256').update(description).digest('base64').slice(0, 8)}`, subZone: '', weight: 0, priority: 1 };
}

const lbTagsOf = (lbEndpoint: JsonObject): Record<string, string> => {
  const metadata = isObject(lbEndpoint.metadata) && isObject(lbEndpoint.metadata.filterMetadata) ? lbEndpoint.metadata.filterMetadata['envoy.lb'] : undefined;
  return isObject(metadata) ? Object.fromEntries(Object.entries(metadata).map(([key, value]) => [key, scalarText(value)])) : {};
};

const addressOf = (lbEndpoint: JsonObject): { address: string; port: number } => {
  const endpoint = isObject(lbEndpoint.endpoint) ? lbEndpoint.endpoint : {};
  const socket = isObject(endpoint.address) && isObject(endpoint.address.socketAddress) ? endpoint.address.socketAddress : {};
  return { address: scalarText(socket.address), port: Number(socket.portValue ?? 0) };
};

/** The assignment again, each endpoint in the locality the rules give it (endpoints of zones no rule allows are left out). */
/** Where the endpoints are seen from: the local zone, and whether other zones are reached through the zone egress. */
export interface LocalityScope {
  readonly localZone: string;
  readonly throughEgress: boolean;
}

const scopeOf = (input: PluginInput): LocalityScope => ({ localZone: input.state.context.state.localZone ?? '', throughEgress: input.state.context.zoneEgressEnabled });

export function localityAwareAssignment(scope: LocalityScope, assignment: ClusterLoadAssignment, conf: Conf, proxyTags: ReadonlyMap<string, readonly string[]>): ClusterLoadAssignment {
  const { localZone } = scope;
  const local = localGroups(conf, proxyTags);
  const crossZone = crossZoneGroups(conf, localZone);
  const byLocality = new Map<string, { locality: Locality; lbEndpoints: JsonObject[] }>();
  for (const group of objectsOf(assignment.endpoints)) {
    for (const lbEndpoint of objectsOf(group.lbEndpoints)) {
      const zone = lbTagsOf(lbEndpoint)[ZONE_TAG] ?? '';
      let locality: Locality | undefined = { zone: localZone, subZone: '', weight: 1, priority: 0 };
      if (zone === localZone) {
        const affinity = local.find((rule) => lbTagsOf(lbEndpoint)[rule.key] === rule.value);
        if (affinity) locality = { zone: localZone, subZone: `${affinity.key}=${affinity.value}`, weight: affinity.weight, priority: 0 };
      } else if (scope.throughEgress) {
        locality = egressLocality(crossZone);
      } else {
        locality = crossZoneLocality(crossZone, zone);
      }
      if (!locality) continue;
      const key = `${locality.zone}:${locality.subZone}`;
      let entry = byLocality.get(key);
      if (!entry) byLocality.set(key, (entry = { locality, lbEndpoints: [] }));
      entry.lbEndpoints.push(lbEndpoint);
    }
  }
  const groups = [...byLocality.values()].map(({ locality, lbEndpoints }): JsonObject => {
    const group: JsonObject = { lbEndpoints: [...lbEndpoints].sort(byAddressThenPort) };
    const description: JsonObject = {};
    if (locality.zone) description.zone = locality.zone;
    if (locality.subZone) description.subZone = locality.subZone;
    group.locality = description;
    if (locality.weight > 0) group.loadBalancingWeight = locality.weight;
    if (locality.priority > 0) group.priority = locality.priority;
    return group;
  });
  groups.sort(byLocalityThenSize);
  const threshold = Math.trunc(Number(conf.localityAwareness?.crossZone?.failoverThreshold?.percentage ?? 0));
  // Integer division, as the reference's: a threshold that does not divide 100 rounds the factor down.
  const overprovisioningFactor = threshold > 0 ? Math.trunc(100 / threshold) * 100 : DEFAULT_OVERPROVISIONING_FACTOR;
  return { '@type': TYPE.clusterLoadAssignment, clusterName: assignment.clusterName, endpoints: groups, policy: { overprovisioningFactor } };
}

function byAddressThenPort(a: JsonObject, b: JsonObject): number {
  const left = addressOf(a);
  const right = addressOf(b);
  if (left.address !== right.address) return left.address < right.address ? -1 : 1;
  return left.port - right.port;
}

function byLocalityThenSize(a: JsonObject, b: JsonObject): number {
  const name = (group: JsonObject) => (isObject(group.locality) ? scalarText(group.locality.zone) + scalarText(group.locality.subZone) : '');
  const [left, right] = [name(a), name(b)];
  if (left !== '' || right !== '') return left < right ? -1 : left > right ? 1 : 0;
  return objectsOf(a.lbEndpoints).length - objectsOf(b.lbEndpoints).length;
}

/** The proxy's values of each tag, over its inbounds. */
function proxyTagValues(input: PluginInput): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const tags of input.state.tagSets) {
    for (const [key, value] of Object.entries(tags)) {
      const list = values.get(key) ?? [];
      if (!list.includes(value)) list.push(value);
      values.set(key, list.sort());
    }
  }
  return values;
}

/** Whether a conf asks for locality awareness (local zone affinity or cross-zone failover). */
export const isLocalityAware = (conf: Conf): boolean => conf.localityAwareness?.localZone !== undefined || conf.localityAwareness?.crossZone !== undefined;

/** A cluster's inline endpoints as the locality awareness of the conf places them; false when it has none of its own. */
export function configureInlineEndpoints(scope: LocalityScope, cluster: Cluster, clusterName: string, conf: Conf, proxyTags: ReadonlyMap<string, readonly string[]>): boolean {
  if (!isObject(cluster.loadAssignment)) return false;
  if (cluster.loadAssignment.clusterName === clusterName) {
    const { '@type': _type, ...inline } = localityAwareAssignment(scope, { '@type': TYPE.clusterLoadAssignment, ...cluster.loadAssignment, clusterName }, conf, proxyTags);
    cluster.loadAssignment = inline;
  }
  return true;
}

/** Locality awareness for one cluster: its inline endpoints, or those sent over EDS, replaced. */
function configureEndpoints(input: PluginInput, cluster: Cluster, clusterName: string, conf: Conf, proxyTags: ReadonlyMap<string, readonly string[]>): void {
  if (!isLocalityAware(conf)) return;
  const scope = scopeOf(input);
  if (configureInlineEndpoints(scope, cluster, clusterName, conf, proxyTags)) return;
  const assignment = input.resources.endpoints.get(clusterName);
  if (assignment) input.resources.addEndpoints(assignment.origin, localityAwareAssignment(scope, assignment.resource, conf, proxyTags));
}

export const applyMeshLoadBalancingStrategy: Plugin<'MeshLoadBalancingStrategy'> = (input, rules) => {
  const confs = new Map<string, Conf>();
  for (const { listener, service } of outboundSites(input)) {
    const conf = confOf(rules.to, meshServiceSubset(service));
    if (!conf) continue;
    if (listener) configureHashPolicies(listener.resource, conf.loadBalancer);
    confs.set(service, conf);
  }
  const proxyTags = proxyTagValues(input);
  // Two outbounds of one service (a VIP and a port) share its clusters: each is configured once.
  for (const { name, resource } of input.resources.clusters.ofOrigin(ORIGIN.outbound)) {
    const service = serviceOfClusterName(name);
    const conf = confs.get(service);
    if (!conf) continue;
    configureCluster(resource, conf);
    configureEndpoints(input, resource, name, conf, proxyTags);
  }
  // A builtin gateway: hash policies on every route by the conf for all destinations, each cluster by its service's.
  const gatewayConf = confOf(rules.to, MESH_SUBSET);
  for (const { routeConfig } of gatewayListenerSites(input)) addHashPolicies(routesOfRouteConfig(routeConfig), gatewayConf?.loadBalancer);
  for (const { cluster, service } of gatewayClusters(input)) {
    const conf = confOf(rules.to, meshServiceSubset(service));
    if (!conf) continue;
    configureCluster(cluster, conf);
    configureEndpoints(input, cluster, cluster.name, conf, proxyTags);
  }
};
