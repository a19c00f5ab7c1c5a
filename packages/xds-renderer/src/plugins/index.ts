// The targetRef policies applied to a proxy's generated resources, one module per kind, in the
// reference's order: routes first (they make listeners and clusters), then what configures them,
// proxy patches last (docs/policies.md, What each policy does to the proxy).
import { type TargetRefPolicyKind, targetRefRulesOf } from '@mesh/policy-matcher';
import type { Plugin, PluginInput } from './common.js';
import { applyMeshAccessLog } from './mesh-access-log.js';
import { applyMeshCircuitBreaker } from './mesh-circuit-breaker.js';
import { applyMeshFaultInjection } from './mesh-fault-injection.js';
import { applyMeshHealthCheck } from './mesh-health-check.js';
import { applyMeshHTTPRoute } from './mesh-http-route.js';
import { applyMeshLoadBalancingStrategy } from './mesh-load-balancing-strategy.js';
import { applyMeshProxyPatch } from './mesh-proxy-patch.js';
import { applyMeshRateLimit } from './mesh-rate-limit.js';
import { applyMeshRetry } from './mesh-retry.js';
import { applyMeshTCPRoute } from './mesh-tcp-route.js';
import { applyMeshTimeout } from './mesh-timeout.js';
import { applyMeshTrace } from './mesh-trace.js';
import { applyMeshTrafficPermission } from './mesh-traffic-permission.js';

export type { PluginInput } from './common.js';

type Step = { readonly [K in TargetRefPolicyKind]: readonly [K, Plugin<K>] }[TargetRefPolicyKind];

const step = <K extends TargetRefPolicyKind>(kind: K, plugin: Plugin<K>): Step => [kind, plugin] as unknown as Step;

/** Every targetRef kind's module, in the order they apply. */
export const TARGET_REF_PLUGINS: readonly Step[] = [
  step('MeshHTTPRoute', applyMeshHTTPRoute),
  step('MeshTCPRoute', applyMeshTCPRoute),
  step('MeshLoadBalancingStrategy', applyMeshLoadBalancingStrategy),
  step('MeshAccessLog', applyMeshAccessLog),
  step('MeshTrace', applyMeshTrace),
  step('MeshFaultInjection', applyMeshFaultInjection),
  step('MeshRateLimit', applyMeshRateLimit),
  step('MeshTimeout', applyMeshTimeout),
  step('MeshTrafficPermission', applyMeshTrafficPermission),
  step('MeshCircuitBreaker', applyMeshCircuitBreaker),
  step('MeshHealthCheck', applyMeshHealthCheck),
  step('MeshRetry', applyMeshRetry),
  step('MeshProxyPatch', applyMeshProxyPatch),
];

/** Applies, in order, the module of every kind with a policy selecting the proxy. */
export function applyTargetRefPolicies(input: PluginInput): void {
  for (const [kind, plugin] of TARGET_REF_PLUGINS) {
    const rules = targetRefRulesOf(input.match, kind);
    if (rules) (plugin as Plugin<TargetRefPolicyKind>)(input, rules);
  }
}
