// MeshRateLimit (docs/policies.md): on the selected inbounds, a local rate limit of HTTP requests
// (per route, with the HTTP filter before the router) and of TCP connections (a network filter
// first in each chain). An inbound a RateLimit already applies to keeps that one alone.
import type { MeshRateLimitConf } from '@mesh/model';
import { FILTER, type JsonObject, TYPE, typedExtension } from '../envoy.js';
import { HTTP_STATUS_NAMES } from '../http-status.js';
import {
  confOf,
  filterChainsOf,
  gatewayListenerSites,
  hasHttpFilter,
  inboundRulesAt,
  inboundSites,
  insertBeforeRouter,
  isObject,
  listOf,
  MESH_SUBSET,
  objectsOf,
  type Plugin,
  protoDuration,
  routesOfRouteConfig,
  updateHttpConnectionManager,
} from './common.js';

type LocalHttp = NonNullable<NonNullable<MeshRateLimitConf['local']>['http']>;
type LocalTcp = NonNullable<NonNullable<MeshRateLimitConf['local']>['tcp']>;

const NETWORK_LOCAL_RATE_LIMIT = 'envoy.extensions.filters.network.local_ratelimit.v3.LocalRateLimit';
const NETWORK_LOCAL_RATE_LIMIT_TYPE = `type.googleapis.com/${NETWORK_LOCAL_RATE_LIMIT}`;

const hundredPercent = (runtimeKey: string): JsonObject => ({ defaultValue: { numerator: 100 }, runtimeKey });

/** A route's token bucket; undefined when HTTP limiting is off or has no rate. */
function routeRateLimit(http: LocalHttp | undefined): JsonObject | undefined {
  if (!http || http.disabled || !http.requestRate) return undefined;
  const requests = http.requestRate.num ?? 0;
  const limit: JsonObject = {
    '@type': TYPE.localRateLimit,
    statPrefix: 'rate_limit',
    tokenBucket: { maxTokens: requests, tokensPerFill: requests, fillInterval: protoDuration(http.requestRate.interval) },
    filterEnabled: hundredPercent('local_rate_limit_enabled'),
    filterEnforced: hundredPercent('local_rate_limit_enforced'),
  };
  const onRateLimit = http.onRateLimit;
  if (onRateLimit) {
    if (onRateLimit.status) limit.status = { code: HTTP_STATUS_NAMES[onRateLimit.status] ?? onRateLimit.status };
    const headers: JsonObject[] = [];
    for (const header of onRateLimit.headers?.add ?? []) headers.push({ header: { key: header.name, value: header.value }, append: true });
    for (const header of onRateLimit.headers?.set ?? []) {
      for (const value of header.value.split(',')) headers.push({ header: { key: header.name, value }, append: false });
    }
    if (headers.length > 0) limit.responseHeadersToAdd = headers;
  }
  return limit;
}

/** The token bucket on each route, unless a route already has one. */
function limitRoutes(routes: readonly JsonObject[], limit: JsonObject): void {
  for (const route of routes) {
    const perFilter: JsonObject = isObject(route.typedPerFilterConfig) ? route.typedPerFilterConfig : {};
    perFilter[FILTER.localRateLimit] ??= structuredClone(limit);
    route.typedPerFilterConfig = perFilter;
  }
}

function configureHttp(chain: JsonObject, limit: JsonObject): void {
  updateHttpConnectionManager(chain, (hcm) => {
    const virtualHosts = isObject(hcm.routeConfig) ? objectsOf(hcm.routeConfig.virtualHosts) : [];
    for (const virtualHost of virtualHosts) {
      const routes = objectsOf(virtualHost.routes);
      // More routes than one mean a RateLimit's routes per client are there.
      if (routes.length > 1) return;
      limitRoutes(routes, limit);
    }
    if (!hasHttpFilter(hcm, FILTER.localRateLimit)) insertBeforeRouter(hcm, typedExtension(FILTER.localRateLimit, { '@type': TYPE.localRateLimit, statPrefix: 'rate_limit' }));
  });
}

function configureTcp(chain: JsonObject, tcp: LocalTcp): void {
  if (tcp.disabled || !tcp.connectionRate) return;
  const connections = tcp.connectionRate.num ?? 0;
  const filter = typedExtension(NETWORK_LOCAL_RATE_LIMIT, {
    '@type': NETWORK_LOCAL_RATE_LIMIT_TYPE,
    statPrefix: 'tcp_rate_limit',
    tokenBucket: { maxTokens: connections, tokensPerFill: connections, fillInterval: protoDuration(tcp.connectionRate.interval) },
  });
  listOf(chain, 'filters').unshift(filter);
}

export const applyMeshRateLimit: Plugin<'MeshRateLimit'> = (input, rules) => {
  for (const { inbound, listener } of inboundSites(input)) {
    if (inbound.rateLimits.length > 0) continue;
    const inboundRules = inboundRulesAt(rules, inbound.interface.dataplaneIp, inbound.interface.dataplanePort);
    // Clients are not told apart: the rule of every client applies.
    const conf = inboundRules && confOf(inboundRules, MESH_SUBSET);
    if (!conf) continue;
    const limit = routeRateLimit(conf.local?.http);
    for (const chain of filterChainsOf(listener.resource)) {
      if (limit) configureHttp(chain, limit);
      if (conf.local?.tcp) configureTcp(chain, conf.local.tcp);
    }
  }
  // A builtin gateway's listeners: every route of their route configuration (whose connection managers have the filter), and TCP connections.
  for (const { listener, port, routeConfig } of gatewayListenerSites(input)) {
    const gatewayRules = inboundRulesAt(rules, input.state.spec.networking?.address ?? '', port);
    const conf = gatewayRules && confOf(gatewayRules, MESH_SUBSET);
    if (!conf) continue;
    const limit = routeRateLimit(conf.local?.http);
    if (limit) limitRoutes(routesOfRouteConfig(routeConfig), limit);
    if (conf.local?.tcp) for (const chain of filterChainsOf(listener.resource)) configureTcp(chain, conf.local.tcp);
  }
};
