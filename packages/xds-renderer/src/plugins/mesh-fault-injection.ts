// MeshFaultInjection (docs/policies.md): HTTP fault filters on the HTTP and HTTP/2 inbounds, one per
// fault of each client rule, matched on the clients' tags header (negated tags as an inverted
// match). An inbound a FaultInjection already applies to keeps that one alone.
import type { MeshFaultInjectionConf } from '@mesh/model';
import type { Subset } from '@mesh/policy-matcher';
import { FILTER, type JsonObject, type Listener, TYPE, typedExtension } from '../envoy.js';
import { fractionalPercent } from '../filters.js';
import { sourcesRegex, TAGS_HEADER } from '../names.js';
import {
  decimalValue,
  filterChainsOf,
  gatewayListenerSites,
  inboundRulesAt,
  inboundSites,
  insertBeforeRouter,
  type Plugin,
  protoDuration,
  type Rules,
  updateHttpConnectionManager,
} from './common.js';
import { regexMatcher } from './header-match.js';

type Fault = NonNullable<MeshFaultInjectionConf['http']>[number];

const BANDWIDTH = /(\d*)\s?([gmk]?bps)/;
const KBPS_FACTOR: Record<string, number> = { kbps: 1, mbps: 1000, gbps: 1_000_000 };

const percentOf = (value: number | string): JsonObject => fractionalPercent(decimalValue(value));

/** The clients' tags header matching the subset's tags, and not matching its negated ones. */
function clientMatchers(subset: Subset): JsonObject[] {
  const matcher = (tags: Subset, invert: boolean): JsonObject => {
    const regex = sourcesRegex([Object.fromEntries(tags.map((tag) => [tag.key, tag.value]))]);
    return { name: TAGS_HEADER, stringMatch: { safeRegex: regexMatcher(regex) }, ...(invert ? { invertMatch: true } : {}) };
  };
  const positive = subset.filter((tag) => !tag.not);
  const negated = subset.filter((tag) => tag.not);
  return [...(positive.length > 0 ? [matcher(positive, false)] : []), ...(negated.length > 0 ? [matcher(negated, true)] : [])];
}

function faultFilter(fault: Fault, subset: Subset): JsonObject {
  const config: JsonObject = { '@type': TYPE.fault };
  if (fault.delay) config.delay = { fixedDelay: protoDuration(fault.delay.value), percentage: percentOf(fault.delay.percentage) };
  if (fault.abort) config.abort = { httpStatus: fault.abort.httpStatus, percentage: percentOf(fault.abort.percentage) };
  if (fault.responseBandwidth) {
    const match = BANDWIDTH.exec(fault.responseBandwidth.limit);
    const kbps = Number(match?.[1] ?? '') * (KBPS_FACTOR[match?.[2] ?? ''] ?? 0);
    // uint64 fields are strings in proto3 JSON.
    config.responseRateLimit = { fixedLimit: { limitKbps: String(kbps) }, percentage: percentOf(fault.responseBandwidth.percentage) };
  }
  if (subset.length > 0) config.headers = clientMatchers(subset);
  return typedExtension(FILTER.fault, config as JsonObject & { '@type': string });
}

/** The fault filters of every client rule, on each HTTP connection manager of the listener. */
function configureListener(listener: Listener, rules: Rules<'MeshFaultInjection'> | undefined): void {
  for (const rule of rules ?? []) {
    for (const chain of filterChainsOf(listener)) {
      updateHttpConnectionManager(chain, (hcm) => insertBeforeRouter(hcm, ...(rule.conf.http ?? []).map((fault) => faultFilter(fault, rule.subset))));
    }
  }
}

export const applyMeshFaultInjection: Plugin<'MeshFaultInjection'> = (input, rules) => {
  for (const { inbound, protocol, listener } of inboundSites(input)) {
    if (inbound.faultInjections.length > 0) continue;
    if (protocol !== 'http' && protocol !== 'http2') continue;
    configureListener(listener.resource, inboundRulesAt(rules, inbound.interface.dataplaneIp, inbound.interface.dataplanePort));
  }
  // A builtin gateway's HTTP listeners, by the rules of the clients at their address and port.
  for (const { listener, port, protocol } of gatewayListenerSites(input)) {
    if (protocol === 'http') configureListener(listener.resource, inboundRulesAt(rules, input.state.spec.networking?.address ?? '', port));
  }
};
