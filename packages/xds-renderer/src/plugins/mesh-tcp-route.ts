// MeshTCPRoute (docs/policies.md): the listener of every outbound a rule applies to becomes a TCP
// proxy to the rule's backends split by weight, and each backend gets a cluster. An HTTP-like
// outbound a MeshHTTPRoute rule also applies to keeps the HTTP route.
import { targetRefRulesOf } from '@mesh/policy-matcher';
import { FILTER, type JsonObject, typedExtension } from '../envoy.js';
import { tcpProxy } from '../filters.js';
import { isHttpLike, type Protocol } from '../protocol.js';
import { ORIGIN } from '../resource-set.js';
import { confOf, meshServiceSubset, outboundSites, type Plugin, serviceProtocol } from './common.js';
import { outboundListener, RouteBackends } from './route-backends.js';

/** TCP proxies carry these protocols: a backend speaking gRPC or Kafka leaves the listener without a proxy, as in the reference. */
const TCP_PROTOCOLS: ReadonlySet<Protocol> = new Set(['unknown', 'tcp', 'http', 'http2']);

export const applyMeshTCPRoute: Plugin<'MeshTCPRoute'> = (input, rules) => {
  if (rules.to.length === 0) return;
  const httpRules = targetRefRulesOf(input.match, 'MeshHTTPRoute')?.to ?? [];
  const backends = new RouteBackends(input);
  for (const site of outboundSites(input)) {
    const protocol = serviceProtocol(input.state, site.service);
    const service = meshServiceSubset(site.service);
    if (isHttpLike(protocol) && confOf(httpRules, service) !== undefined) continue;
    const backendRefs = confOf(rules.to, service)?.default.backendRefs ?? [];
    if (backendRefs.length === 0) continue;
    const split = backends.split(backendRefs, TCP_PROTOCOLS) ?? [];
    // Without backends to split between there is nothing to proxy to: the chain stays empty.
    const chain: JsonObject = split.length > 0 ? { filters: [typedExtension(FILTER.tcpProxy, tcpProxy(site.service, split.map(({ clusterName, weight }) => ({ name: clusterName, weight }))))] } : {};
    input.resources.addListener(ORIGIN.outbound, outboundListener(input, site, chain));
  }
  backends.addResources();
};
