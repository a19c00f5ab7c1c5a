// Which source/destination and selector policies apply to one proxy, per inbound, outbound,
// reached service and for the whole proxy (docs/matching.md).
import { SERVICE_TAG } from '@mesh/model';
import { permittedExternalServices, type PermittedExternalService } from './external-services.js';
import { type IndexedPolicy, type PolicyIndex, policyIndexOf } from './policy-index.js';
import { ownServicesOf, PASS_THROUGH_SERVICE, type ProxyInbound, type ProxyOutbound, type ProxyView, proxyViewOf } from './proxy.js';
import { selectAllForTags, selectDataplanePolicy, selectForTags, selectPerService, SourceRanks } from './select.js';
import type { DataplaneResource, MeshSnapshot, PolicyKind, PolicyOf } from './snapshot.js';
import { type DestinationEntry, DestinationMapBuilder, resolvedRouteConfFor, type TrafficRouteConf } from './traffic-route.js';

export interface InboundMatch extends ProxyInbound {
  readonly trafficPermission?: PolicyOf<'TrafficPermission'>;
  /** All matching, most specific first; a policy repeats once per matching destination. */
  readonly faultInjections: readonly PolicyOf<'FaultInjection'>[];
  readonly rateLimits: readonly PolicyOf<'RateLimit'>[];
}

export interface OutboundMatch extends ProxyOutbound {
  readonly trafficRoute?: PolicyOf<'TrafficRoute'>;
  /** The route's conf with its wildcards resolved for this outbound (shared between proxies: read-only). */
  readonly routeConf?: TrafficRouteConf;
  readonly timeout?: PolicyOf<'Timeout'>;
  readonly rateLimit?: PolicyOf<'RateLimit'>;
}

export interface ServiceMatch {
  readonly service: string;
  readonly trafficLog?: PolicyOf<'TrafficLog'>;
  readonly healthCheck?: PolicyOf<'HealthCheck'>;
  readonly circuitBreaker?: PolicyOf<'CircuitBreaker'>;
  readonly retry?: PolicyOf<'Retry'>;
}

export interface MatchedPolicies {
  readonly dataplane: { readonly mesh: string; readonly name: string };
  readonly isBuiltinGateway: boolean;
  /** Every inbound in spec order, then the metrics inbound when mesh metrics are on. */
  readonly inbounds: readonly InboundMatch[];
  /** Every outbound (VIP outbounds first for transparent proxies). */
  readonly outbounds: readonly OutboundMatch[];
  /** Services with at least one policy, by name: outbound services, `pass_through` and routed-to services. */
  readonly services: readonly ServiceMatch[];
  readonly proxyTemplate?: PolicyOf<'ProxyTemplate'>;
  readonly trafficTrace?: PolicyOf<'TrafficTrace'>;
  /** The services the proxy reaches and the tag sets of their endpoints. */
  readonly destinations: readonly DestinationEntry[];
  readonly externalServices: readonly PermittedExternalService[];
  /** The services the proxy is known by (inbounds, metrics inbound, gateway). */
  readonly ownServices: ReadonlySet<string>;
}

const policyOf = <K extends PolicyKind>(entry: IndexedPolicy<K> | undefined): PolicyOf<K> | undefined => entry?.policy;

function matchInbound(index: PolicyIndex, inbound: ProxyInbound): InboundMatch {
  return {
    ...inbound,
    trafficPermission: policyOf(selectForTags(index.kind('TrafficPermission'), inbound.tags)),
    faultInjections: selectAllForTags(index.kind('FaultInjection'), inbound.tags).map((entry) => entry.policy),
    rateLimits: selectAllForTags(index.kind('RateLimit'), inbound.tags).map((entry) => entry.policy),
  };
}

/** Matches a proxy already turned into its view; `matchPolicies` is the usual entry point. */
export function matchProxy(dataplane: DataplaneResource, proxy: ProxyView, index: PolicyIndex): MatchedPolicies {
  const ownServices = ownServicesOf(proxy);
  const sourceRanks = new SourceRanks(proxy);
  const outboundServices = [...proxy.outbounds.map((outbound) => outbound.service), PASS_THROUGH_SERVICE];
  const perOutboundService = <K extends PolicyKind>(kind: K) => selectPerService(index.kind(kind), sourceRanks, outboundServices);
  const routes = perOutboundService('TrafficRoute');
  const timeouts = perOutboundService('Timeout');
  const outboundRateLimits = perOutboundService('RateLimit');
  const trafficLogs = perOutboundService('TrafficLog');

  const destinations = new DestinationMapBuilder();
  const outbounds = proxy.outbounds.map((outbound): OutboundMatch => {
    const routeEntry = routes.get(outbound.service);
    const route = routeEntry?.policy;
    const routeConf = routeEntry && resolvedRouteConfFor(routeEntry, outbound.tags);
    if (routeConf) destinations.addRoute(routeConf);
    else destinations.add(outbound.service, { [SERVICE_TAG]: outbound.service });
    return {
      ...outbound,
      trafficRoute: route,
      routeConf,
      timeout: policyOf(timeouts.get(outbound.service)),
      rateLimit: policyOf(outboundRateLimits.get(outbound.service)),
    };
  });

  // HealthCheck, CircuitBreaker and Retry follow the routes, so they may apply to services no outbound names.
  const reached = [...destinations.services];
  const perReachedService = <K extends PolicyKind>(kind: K) => selectPerService(index.kind(kind), sourceRanks, reached);
  const healthChecks = perReachedService('HealthCheck');
  const circuitBreakers = perReachedService('CircuitBreaker');
  const retries = perReachedService('Retry');
  const serviceNames = new Set([...trafficLogs.keys(), ...healthChecks.keys(), ...circuitBreakers.keys(), ...retries.keys()]);
  const services = [...serviceNames].sort().map((service) => ({
    service,
    trafficLog: policyOf(trafficLogs.get(service)),
    healthCheck: policyOf(healthChecks.get(service)),
    circuitBreaker: policyOf(circuitBreakers.get(service)),
    retry: policyOf(retries.get(service)),
  }));

  return {
    dataplane: { mesh: dataplane.mesh, name: dataplane.name },
    isBuiltinGateway: proxy.isBuiltinGateway,
    inbounds: proxy.inbounds.map((inbound) => matchInbound(index, inbound)),
    outbounds,
    services,
    proxyTemplate: policyOf(selectDataplanePolicy(index.kind('ProxyTemplate'), proxy, ownServices)),
    trafficTrace: policyOf(selectDataplanePolicy(index.kind('TrafficTrace'), proxy, ownServices)),
    destinations: destinations.build(),
    externalServices: permittedExternalServices(index, proxy),
    ownServices,
  };
}

/**
 * The policies of every family that apply to a dataplane, with the reference's ranking. Pass the
 * same snapshot object (or its `indexPolicies` result) for every dataplane of a mesh: its index
 * is built once.
 */
export function matchPolicies(dataplane: DataplaneResource, snapshot: MeshSnapshot | PolicyIndex): MatchedPolicies {
  const index = policyIndexOf(snapshot);
  return matchProxy(dataplane, proxyViewOf(dataplane.spec, index.snapshot), index);
}
