// Which source/destination and selector policies apply to one proxy, per inbound, outbound,
// reached service and for the whole proxy (docs/matching.md).
import { hash } from 'node:crypto';
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
  /**
   * Equal for proxies matched alike: the same tags and outbound tags, whatever their names,
   * addresses and ports. Renderers share what such proxies render alike by it.
   */
  readonly classKey: string;
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

function matchInbound(index: PolicyIndex, tags: ProxyInbound['tags']): Pick<InboundMatch, 'trafficPermission' | 'faultInjections' | 'rateLimits'> {
  return {
    trafficPermission: policyOf(selectForTags(index.kind('TrafficPermission'), tags)),
    faultInjections: selectAllForTags(index.kind('FaultInjection'), tags).map((entry) => entry.policy),
    rateLimits: selectAllForTags(index.kind('RateLimit'), tags).map((entry) => entry.policy),
  };
}

/** What matching decides for a proxy, apart from its own interfaces: the same for every proxy of one class. */
interface ClassMatch {
  readonly inbounds: readonly Pick<InboundMatch, 'trafficPermission' | 'faultInjections' | 'rateLimits'>[];
  readonly outbounds: readonly Pick<OutboundMatch, 'trafficRoute' | 'routeConf' | 'timeout' | 'rateLimit'>[];
  readonly services: readonly ServiceMatch[];
  readonly proxyTemplate: PolicyOf<'ProxyTemplate'> | undefined;
  readonly trafficTrace: PolicyOf<'TrafficTrace'> | undefined;
  readonly destinations: readonly DestinationEntry[];
  readonly externalServices: readonly PermittedExternalService[];
  readonly ownServices: ReadonlySet<string>;
}

/**
 * Matching reads a proxy's tags and outbound services, never its name, addresses or ports: the
 * instances of a service with equal tags match alike. Their class's match is kept per index (a new
 * index comes with every policy change), so a mesh-wide change matches each class once.
 */
const classMatchesByIndex = new WeakMap<PolicyIndex, Map<string, ClassMatch>>();

/** A digest: a transparent proxy's hundreds of outbounds would make the text itself kilobytes long. */
const classKeyOf = (proxy: ProxyView): string =>
  hash('sha256', JSON.stringify([proxy.isBuiltinGateway, proxy.tagSets, proxy.inbounds.map((inbound) => inbound.tags), proxy.outbounds.map((outbound) => outbound.tags)]), 'base64');

function matchClass(proxy: ProxyView, index: PolicyIndex): ClassMatch {
  const ownServices = ownServicesOf(proxy);
  const sourceRanks = new SourceRanks(proxy);
  const outboundServices = [...proxy.outbounds.map((outbound) => outbound.service), PASS_THROUGH_SERVICE];
  const perOutboundService = <K extends PolicyKind>(kind: K) => selectPerService(index.kind(kind), sourceRanks, outboundServices);
  const routes = perOutboundService('TrafficRoute');
  const timeouts = perOutboundService('Timeout');
  const outboundRateLimits = perOutboundService('RateLimit');
  const trafficLogs = perOutboundService('TrafficLog');

  const destinations = new DestinationMapBuilder();
  const outbounds = proxy.outbounds.map((outbound) => {
    const routeEntry = routes.get(outbound.service);
    const routeConf = routeEntry && resolvedRouteConfFor(routeEntry, outbound.tags);
    if (routeConf) destinations.addRoute(routeConf);
    else destinations.add(outbound.service, { [SERVICE_TAG]: outbound.service });
    return {
      trafficRoute: routeEntry?.policy,
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
    inbounds: proxy.inbounds.map((inbound) => matchInbound(index, inbound.tags)),
    outbounds,
    services,
    proxyTemplate: policyOf(selectDataplanePolicy(index.kind('ProxyTemplate'), proxy, ownServices)),
    trafficTrace: policyOf(selectDataplanePolicy(index.kind('TrafficTrace'), proxy, ownServices)),
    destinations: destinations.build(),
    externalServices: permittedExternalServices(index, proxy),
    ownServices,
  };
}

/** Matches a proxy already turned into its view; `matchPolicies` is the usual entry point. */
export function matchProxy(dataplane: DataplaneResource, proxy: ProxyView, index: PolicyIndex, classKey = classKeyOf(proxy)): MatchedPolicies {
  let classMatches = classMatchesByIndex.get(index);
  if (!classMatches) classMatchesByIndex.set(index, (classMatches = new Map<string, ClassMatch>()));
  let classMatch = classMatches.get(classKey);
  if (!classMatch) classMatches.set(classKey, (classMatch = matchClass(proxy, index)));
  const { inbounds, outbounds } = classMatch;
  // Literals rather than spreads: this runs for every proxy a change reaches.
  return {
    dataplane: { mesh: dataplane.mesh, name: dataplane.name },
    isBuiltinGateway: proxy.isBuiltinGateway,
    classKey,
    inbounds: proxy.inbounds.map((inbound, at): InboundMatch => {
      const matched = inbounds[at] ?? NO_INBOUND_POLICIES;
      return {
        name: inbound.name,
        service: inbound.service,
        tags: inbound.tags,
        interface: inbound.interface,
        trafficPermission: matched.trafficPermission,
        faultInjections: matched.faultInjections,
        rateLimits: matched.rateLimits,
      };
    }),
    outbounds: proxy.outbounds.map((outbound, at): OutboundMatch => {
      const matched = outbounds[at];
      return {
        name: outbound.name,
        service: outbound.service,
        tags: outbound.tags,
        trafficRoute: matched?.trafficRoute,
        routeConf: matched?.routeConf,
        timeout: matched?.timeout,
        rateLimit: matched?.rateLimit,
      };
    }),
    services: classMatch.services,
    proxyTemplate: classMatch.proxyTemplate,
    trafficTrace: classMatch.trafficTrace,
    destinations: classMatch.destinations,
    externalServices: classMatch.externalServices,
    ownServices: classMatch.ownServices,
  };
}

const NO_INBOUND_POLICIES: ClassMatch['inbounds'][number] = { trafficPermission: undefined, faultInjections: [], rateLimits: [] };

/** A dataplane's view and class key, kept while the spec and the mesh parts the view reads stay the same objects. */
interface ClassifiedView {
  readonly meshSpec: MeshSnapshot['meshSpec'];
  readonly vipOutbounds: MeshSnapshot['vipOutbounds'];
  readonly view: ProxyView;
  readonly classKey: string;
}

const classifiedViews = new WeakMap<DataplaneResource['spec'], ClassifiedView>();

function classifiedViewOf(spec: DataplaneResource['spec'], snapshot: MeshSnapshot): ClassifiedView {
  const known = classifiedViews.get(spec);
  if (known && known.meshSpec === snapshot.meshSpec && known.vipOutbounds === snapshot.vipOutbounds) return known;
  const view = proxyViewOf(spec, snapshot);
  const classified = { meshSpec: snapshot.meshSpec, vipOutbounds: snapshot.vipOutbounds, view, classKey: classKeyOf(view) };
  classifiedViews.set(spec, classified);
  return classified;
}

/**
 * The policies of every family that apply to a dataplane, with the reference's ranking. Pass the
 * same snapshot object (or its `indexPolicies` result) for every dataplane of a mesh: its index
 * is built once.
 */
export function matchPolicies(dataplane: DataplaneResource, snapshot: MeshSnapshot | PolicyIndex): MatchedPolicies {
  const index = policyIndexOf(snapshot);
  const { view, classKey } = classifiedViewOf(dataplane.spec, index.snapshot);
  return matchProxy(dataplane, view, index, classKey);
}
