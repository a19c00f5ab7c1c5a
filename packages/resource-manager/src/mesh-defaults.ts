// The resources the reference creates with every mesh (docs/api.md, Meshes).
import type { PolicyKind } from '@mesh/model';
import type { NewResource } from '@mesh/store';

const ALL_SERVICES = [{ match: { 'mesh.io/service': '*' } }];
const BACK_OFF = { baseInterval: '0.025s', maxInterval: '0.250s' };

const DEFAULT_POLICIES: ReadonlyArray<{ type: PolicyKind; prefix: string; conf: Record<string, unknown> | undefined }> = [
  { type: 'TrafficPermission', prefix: 'allow-all', conf: undefined },
  { type: 'TrafficRoute', prefix: 'route-all', conf: { destination: { 'mesh.io/service': '*' }, loadBalancer: { roundRobin: {} } } },
  {
    type: 'Timeout',
    prefix: 'timeout-all',
    conf: { connectTimeout: '5s', tcp: { idleTimeout: '3600s' }, http: { requestTimeout: '15s', idleTimeout: '3600s', streamIdleTimeout: '1800s' } },
  },
  {
    type: 'CircuitBreaker',
    prefix: 'circuit-breaker-all',
    conf: { thresholds: { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 } },
  },
  {
    type: 'Retry',
    prefix: 'retry-all',
    conf: {
      http: { numRetries: 5, perTryTimeout: '16s', backOff: BACK_OFF },
      tcp: { maxConnectAttempts: 5 },
      grpc: { numRetries: 5, perTryTimeout: '16s', backOff: BACK_OFF },
    },
  },
];

/** The default policies of mesh `mesh`, less the kinds named in `skipCreatingInitialPolicies` (`*` skips all). */
export function defaultPolicies(mesh: string, skip: readonly string[]): NewResource[] {
  if (skip.includes('*')) return [];
  return DEFAULT_POLICIES.filter((p) => !skip.includes(p.type)).map((p) => ({
    type: p.type,
    mesh,
    name: `${p.prefix}-${mesh}`,
    spec: JSON.stringify({ sources: ALL_SERVICES, destinations: ALL_SERVICES, ...(p.conf ? { conf: p.conf } : {}) }),
  }));
}
