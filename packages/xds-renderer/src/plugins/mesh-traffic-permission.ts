// MeshTrafficPermission (docs/policies.md): with mesh mTLS on, the RBAC filter of every mesh-TLS
// filter chain of a selected inbound, in place of the TrafficPermission's: clients of the rules
// that allow are let in (by their certificate's SPIFFE id and tags), the others are not;
// `AllowWithShadowDeny` also logs them as shadow denials.
import { type MeshTrafficPermissionConf, SERVICE_TAG } from '@mesh/model';
import type { Subset } from '@mesh/policy-matcher';
import { FILTER, type JsonObject, sanitizeMetric, TYPE, typedExtension } from '../envoy.js';
import { serviceSpiffeId, tagIdentity } from '../names.js';
import { filterChainsOf, inboundRulesAt, inboundSites, isObject, listOf, type Plugin, type Rules } from './common.js';

type Action = NonNullable<MeshTrafficPermissionConf['action']>;

const POLICY_NAME = 'MeshTrafficPermission';

const authenticated = (principalName: JsonObject): JsonObject => ({ authenticated: { principalName } });

/** Clients of a subset: each tag (the service by its SPIFFE id), negated ones inverted, all required. */
function principalOf(subset: Subset, mesh: string): JsonObject {
  const principals = subset.map((tag) => {
    const principal = authenticated({ exact: tag.key === SERVICE_TAG ? serviceSpiffeId(mesh, tag.value) : tagIdentity(tag.key, tag.value) });
    return tag.not ? { notId: principal } : principal;
  });
  if (principals.length === 0) return { any: true };
  return principals.length === 1 ? (principals[0] as JsonObject) : { andIds: { ids: principals } };
}

const policyOf = (principals: JsonObject[]): JsonObject => ({ permissions: [{ any: true }], principals });

/** The RBAC network filter of the rules: their clients let in (or shadow-denied), everyone else not. */
export function meshTrafficPermissionFilter(statPrefix: string, rules: Rules<'MeshTrafficPermission'>, mesh: string): JsonObject {
  const byAction = new Map<Action | undefined, JsonObject[]>();
  for (const rule of rules) {
    const action = rule.conf.action;
    byAction.set(action, [...(byAction.get(action) ?? []), principalOf(rule.subset, mesh)]);
  }
  const allowed = [...(byAction.get('Allow') ?? []), ...(byAction.get('AllowWithShadowDeny') ?? [])];
  // An ALLOW rule set with no policy lets nobody in.
  const config: JsonObject = { '@type': TYPE.networkRbac, rules: allowed.length > 0 ? { policies: { [POLICY_NAME]: policyOf(allowed) } } : {}, statPrefix: `${sanitizeMetric(statPrefix)}.` };
  const shadowDenied = byAction.get('AllowWithShadowDeny') ?? [];
  if (shadowDenied.length > 0) config.shadowRules = { action: 'DENY', policies: { [POLICY_NAME]: policyOf(shadowDenied) } };
  return typedExtension(FILTER.rbac, config as JsonObject & { '@type': string });
}

const isMeshTls = (chain: JsonObject): boolean => isObject(chain.transportSocket) && chain.transportSocket.name === FILTER.tlsTransportSocket;

export const applyMeshTrafficPermission: Plugin<'MeshTrafficPermission'> = (input, rules) => {
  const { state } = input;
  if (!state.context.mtls || state.policies.isBuiltinGateway) return;
  for (const { inbound, listener } of inboundSites(input)) {
    const inboundRules = inboundRulesAt(rules, inbound.interface.dataplaneIp, inbound.interface.dataplanePort);
    if (!inboundRules) continue;
    for (const chain of filterChainsOf(listener.resource)) {
      // Only the chains mesh mTLS protects.
      if (!isMeshTls(chain)) continue;
      const filters = listOf(chain, 'filters');
      const legacy = filters.findIndex((filter) => isObject(filter) && filter.name === FILTER.rbac);
      if (legacy >= 0) filters.splice(legacy, 1);
      filters.unshift(meshTrafficPermissionFilter(listener.name, inboundRules, state.dataplane.mesh));
    }
  }
};
