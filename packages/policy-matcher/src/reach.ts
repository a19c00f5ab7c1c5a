// What an incremental caller needs: which proxies a policy can possibly affect, told by the
// services its selectors pin, so a change re-matches only those proxies.
import { getKind, SERVICE_TAG, type TagMap } from '@mesh/model';
import type { GatewayMatch } from './gateway.js';
import type { MatchedPolicies } from './match-policies.js';
import { PASS_THROUGH_SERVICE } from './proxy.js';
import { compileSelector } from './selector.js';
import type { MeshSnapshot, PolicyKind, PolicySpecs } from './snapshot.js';

/** Services named exactly by selectors; `any` when one selector names none (or `*`). */
export interface ServiceSet {
  readonly any: boolean;
  readonly services: readonly string[];
}

/** A proxy is affected when one of its own services is in `proxies` and, if given, a service it reaches is in `destinations`. */
export interface ReachCondition {
  readonly proxies: ServiceSet;
  readonly destinations?: ServiceSet;
}

/** The proxies a policy can affect: those meeting one of the conditions. */
export interface PolicyReach {
  readonly conditions: readonly ReachCondition[];
}

/** The services a proxy is known by and those it sends traffic to. */
export interface ProxyServices {
  readonly own: ReadonlySet<string>;
  readonly reached: ReadonlySet<string>;
}

const ANY: ServiceSet = { any: true, services: [] };

type Selectors = ReadonlyArray<{ match?: TagMap | undefined }> | undefined;

function serviceSetOf(selectors: Selectors, noneMatchesAll: boolean): ServiceSet {
  const compiled = (selectors ?? []).map((selector) => compileSelector(selector.match));
  if (compiled.length === 0) return noneMatchesAll ? ANY : { any: false, services: [] };
  const services = compiled.flatMap((selector) => (selector.service === undefined ? [] : [selector.service]));
  return { any: services.length < compiled.length, services: [...new Set(services)] };
}

interface SelectionFields {
  sources?: Selectors;
  destinations?: Selectors;
  selectors?: Selectors;
}

/**
 * The reach of a policy. Conservative: every proxy the policy could apply to is covered. On an
 * update, re-match the proxies reached by the old spec and by the new one.
 */
export function policyReach<K extends PolicyKind>(kind: K, spec: PolicySpecs[K]): PolicyReach {
  const fields = spec as SelectionFields;
  const sources = serviceSetOf(fields.sources, false);
  const destinations = serviceSetOf(fields.destinations, false);
  switch (getKind(kind).reach) {
    case 'selected':
      return { conditions: [{ proxies: serviceSetOf(fields.selectors, true) }] };
    case 'everyProxy':
      return { conditions: [{ proxies: ANY }] };
    case 'destinationsAndSenders':
      return { conditions: [{ proxies: destinations }, { proxies: sources, destinations }] };
    default:
      return { conditions: [{ proxies: sources, destinations }] };
  }
}

const intersects = (set: ServiceSet, services: ReadonlySet<string>): boolean => set.any || set.services.some((service) => services.has(service));

/** The proxy side alone, before the services a proxy reaches are known (they come from matching). */
export const maySelect = (reach: PolicyReach, ownServices: ReadonlySet<string>): boolean =>
  reach.conditions.some((condition) => intersects(condition.proxies, ownServices));

export const mayAffect = (reach: PolicyReach, services: ProxyServices): boolean =>
  reach.conditions.some((condition) => intersects(condition.proxies, services.own) && (!condition.destinations || intersects(condition.destinations, services.reached)));

/**
 * The services of a proxy from its last match. A proxy reaches its outbounds' services, the
 * services its routes lead to, `pass_through`, and every external service of the mesh (a
 * permission can open any of them to it).
 */
export function proxyServicesOf(match: MatchedPolicies | GatewayMatch, snapshot: Pick<MeshSnapshot, 'externalServices'>): ProxyServices {
  const reached = new Set([PASS_THROUGH_SERVICE]);
  if ('reachedServices' in match) for (const service of match.reachedServices) reached.add(service);
  else {
    for (const outbound of match.outbounds) reached.add(outbound.service);
    for (const destination of match.destinations) reached.add(destination.service);
  }
  for (const externalService of snapshot.externalServices ?? []) {
    const service = externalService.spec.tags?.[SERVICE_TAG];
    if (service !== undefined) reached.add(service);
  }
  return { own: match.ownServices, reached };
}
