// MeshTimeout (docs/policies.md): connection, idle and HTTP timeouts on the listeners and clusters
// of inbounds (`from`) and outbounds (`to`), per route of a MeshHTTPRoute the policy targets. It
// replaces what a Timeout set: once any MeshTimeout selects the proxy, an inbound no MeshTimeout
// selects gets the defaults below, and every HTTP listener leaves idle connections to the cluster.
import type { MeshTimeoutConf } from '@mesh/model';
import { RULE_MATCHES_HASH_TAG, type Subset } from '@mesh/policy-matcher';
import { httpProtocolOptions } from '../clusters.js';
import type { Cluster, JsonObject, Listener } from '../envoy.js';
import { localClusterName } from '../names.js';
import { isHttpLike, type Protocol } from '../protocol.js';
import { ORIGIN } from '../resource-set.js';
import {
  confOf,
  filterChainsOf,
  gatewayClusters,
  gatewayListenerSites,
  inboundRulesAt,
  inboundSites,
  isObject,
  MESH_SUBSET,
  meshServiceSubset,
  outboundSites,
  type Plugin,
  protoDuration,
  routesOfRouteConfig,
  type Rules,
  serviceOfClusterName,
  serviceProtocol,
  updateHttpConnectionManager,
  updateTcpProxy,
} from './common.js';

const DEFAULT = {
  connectionTimeout: '5s',
  idleTimeout: '3600s',
  requestTimeout: '15s',
  streamIdleTimeout: '1800s',
  maxStreamDuration: '0s',
  maxConnectionDuration: '0s',
} as const;

const durationOr = (duration: string | undefined, fallback: string): string => (duration === undefined ? fallback : protoDuration(duration));

/** The conf for a subset; an inbound no policy selects (no rules at all) gets the defaults. */
const timeoutConf = (rules: Rules<'MeshTimeout'> | undefined, subset: Subset): MeshTimeoutConf | undefined => (rules === undefined ? {} : confOf(rules, subset));

/** A route's request timeout, and its stream idle timeout unless one is already set. */
function configureRouteAction(action: unknown, conf: MeshTimeoutConf): void {
  if (!isObject(action)) return;
  action.timeout = durationOr(conf.http?.requestTimeout, DEFAULT.requestTimeout);
  if (conf.http?.streamIdleTimeout !== undefined) action.idleTimeout = protoDuration(conf.http.streamIdleTimeout);
  else action.idleTimeout ??= DEFAULT.streamIdleTimeout;
}

function configureListener(listener: Listener, rules: Rules<'MeshTimeout'> | undefined, subset: Subset, protocol: Protocol): void {
  for (const chain of filterChainsOf(listener)) {
    if (isHttpLike(protocol)) {
      updateHttpConnectionManager(chain, (hcm) => {
        for (const route of routesOfRouteConfig(hcm.routeConfig)) {
          // A route of a MeshHTTPRoute is named after its matches, which the rules of policies targeting the route carry.
          const routeSubset: Subset = [...subset, { key: RULE_MATCHES_HASH_TAG, value: typeof route.name === 'string' ? route.name : '', not: false }];
          const conf = timeoutConf(rules, routeSubset) ?? timeoutConf(rules, subset);
          if (conf) configureRouteAction(route.route, conf);
        }
        // Idle connections are the cluster's to time out.
        hcm.commonHttpProtocolOptions = { ...(isObject(hcm.commonHttpProtocolOptions) ? hcm.commonHttpProtocolOptions : {}), idleTimeout: '0s' };
      });
    } else {
      updateTcpProxy(chain, (proxy) => {
        const conf = timeoutConf(rules, subset);
        if (conf) proxy.idleTimeout = durationOr(conf.idleTimeout, DEFAULT.idleTimeout);
      });
    }
  }
}

/** Connect timeout, and for HTTP and HTTP/2 the upstream idle timeout and durations. */
function configureCluster(cluster: Cluster, conf: MeshTimeoutConf, protocol: Protocol): void {
  cluster.connectTimeout = durationOr(conf.connectionTimeout, DEFAULT.connectionTimeout);
  if (protocol !== 'http' && protocol !== 'http2') return;
  const options = httpProtocolOptions(cluster);
  const common: JsonObject = isObject(options.commonHttpProtocolOptions) ? options.commonHttpProtocolOptions : {};
  common.idleTimeout = durationOr(conf.idleTimeout, DEFAULT.idleTimeout);
  common.maxStreamDuration = durationOr(conf.http?.maxStreamDuration, DEFAULT.maxStreamDuration);
  common.maxConnectionDuration = durationOr(conf.http?.maxConnectionDuration, DEFAULT.maxConnectionDuration);
  options.commonHttpProtocolOptions = common;
}

export const applyMeshTimeout: Plugin<'MeshTimeout'> = (input, rules) => {
  if (rules.to.length === 0 && rules.from.length === 0) return;
  for (const { inbound, protocol, listener } of inboundSites(input)) {
    const { dataplaneIp, dataplanePort, workloadPort } = inbound.interface;
    const inboundRules = inboundRulesAt(rules, dataplaneIp, dataplanePort);
    configureListener(listener.resource, inboundRules, MESH_SUBSET, protocol);
    const cluster = input.resources.clusters.get(localClusterName(workloadPort));
    const conf = timeoutConf(inboundRules, MESH_SUBSET);
    if (cluster?.origin === ORIGIN.inbound && conf) configureCluster(cluster.resource, conf, protocol);
  }
  for (const { listener, service } of outboundSites(input)) {
    if (listener) configureListener(listener.resource, rules.to, meshServiceSubset(service), serviceProtocol(input.state, service));
  }
  for (const { name, resource } of input.resources.clusters.ofOrigin(ORIGIN.outbound)) {
    const service = serviceOfClusterName(name);
    const conf = confOf(rules.to, meshServiceSubset(service));
    if (conf) configureCluster(resource, conf, serviceProtocol(input.state, service));
  }
  // A builtin gateway: every route from the conf for all destinations, each cluster from its service's.
  const gatewayConf = timeoutConf(rules.to.length > 0 ? rules.to : undefined, MESH_SUBSET);
  for (const { routeConfig } of gatewayListenerSites(input)) {
    if (gatewayConf) for (const route of routesOfRouteConfig(routeConfig)) configureRouteAction(route.route, gatewayConf);
  }
  for (const { cluster, service, protocol } of gatewayClusters(input)) {
    const conf = confOf(rules.to, meshServiceSubset(service));
    if (conf) configureCluster(cluster, conf, protocol);
  }
};
