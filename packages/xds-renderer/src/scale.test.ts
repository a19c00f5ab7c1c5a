// The benchmark's shape: 5,000 dataplanes over 500 services with 1,000 policies, every proxy
// matched and rendered from one prepared mesh context.
import type { PoliciesByKind } from '@mesh/policy-matcher';
import { matchPolicies } from '@mesh/policy-matcher';
import { describe, expect, it } from 'vitest';
import { renderProxyConfig } from './proxy.js';
import { dataplane, meshContextOf, meshSpec, policy } from './test-fixtures.js';

const SERVICES = 500;
const DATAPLANES = 5_000;
const service = (index: number): string => `svc-${index % SERVICES}`;
const match = (name: string) => ({ match: { 'mesh.io/service': name } });

function bigMesh() {
  const dataplanes = Array.from({ length: DATAPLANES }, (_, index) =>
    dataplane(`dp-${index}`, {
      address: `10.${Math.floor(index / 250)}.${index % 250}.1`,
      inbound: [{ port: 8080, servicePort: 8081, tags: { 'mesh.io/service': service(index), 'mesh.io/protocol': 'http', version: `v${index % 3}` } }],
      outbound: [1, 7, 31, 101].map((step, port) => ({ port: 10001 + port, tags: { 'mesh.io/service': service(index + step) } })),
    }),
  );
  const ANY = match('*');
  // 1,000 policies: per-service routes with a version split and per-service connection policies.
  const policies: PoliciesByKind = {
    TrafficRoute: [
      policy('TrafficRoute', 'route-all', { sources: [ANY], destinations: [ANY], conf: { destination: { 'mesh.io/service': '*' } } }),
      ...Array.from({ length: 299 }, (_, i) =>
        policy('TrafficRoute', `route-${i}`, {
          sources: [ANY],
          destinations: [match(service(i))],
          conf: { split: [{ weight: 80, destination: { 'mesh.io/service': service(i), version: 'v1' } }, { weight: 20, destination: { 'mesh.io/service': service(i), version: 'v2' } }] },
        }),
      ),
    ],
    Timeout: Array.from({ length: 150 }, (_, i) => policy('Timeout', `timeout-${i}`, { sources: [ANY], destinations: [match(service(i * 3))], conf: { connectTimeout: '5s', http: { requestTimeout: '15s' } } })),
    HealthCheck: Array.from({ length: 100 }, (_, i) => policy('HealthCheck', `hc-${i}`, { sources: [ANY], destinations: [match(service(i * 5))], conf: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 } })),
    CircuitBreaker: Array.from({ length: 100 }, (_, i) => policy('CircuitBreaker', `cb-${i}`, { sources: [ANY], destinations: [match(service(i * 5 + 1))], conf: { thresholds: { maxConnections: 100 } } })),
    Retry: Array.from({ length: 100 }, (_, i) => policy('Retry', `retry-${i}`, { sources: [ANY], destinations: [match(service(i * 5 + 2))], conf: { http: { numRetries: 3 } } })),
    TrafficPermission: Array.from({ length: 100 }, (_, i) => policy('TrafficPermission', `tp-${i}`, { sources: [match(service(i + 1))], destinations: [match(service(i))] })),
    TrafficLog: Array.from({ length: 50 }, (_, i) => policy('TrafficLog', `log-${i}`, { sources: [ANY], destinations: [match(service(i * 10))] })),
    RateLimit: Array.from({ length: 100 }, (_, i) => policy('RateLimit', `rl-${i}`, { sources: [match(service(i + 2))], destinations: [match(service(i))], conf: { http: { requests: 100, interval: '1s' } } })),
  };
  const spec = meshSpec({
    mtls: { enabledBackend: 'ca', backends: [{ name: 'ca', type: 'builtin' }] },
    logging: { defaultBackend: 'file', backends: [{ name: 'file', type: 'file', conf: { path: '/tmp/access.log' } }] },
  });
  return { dataplanes, policies, spec };
}

describe('scale', () => {
  // How long this takes is measured by `npm run bench:xds`; here only what comes out counts, with
  // room for a machine whose cores are busy with other work.
  it('matches and renders 5,000 proxies of 500 services with 1,000 policies', { timeout: 300_000 }, () => {
    const { dataplanes, policies, spec } = bigMesh();
    expect(Object.values(policies).reduce((sum, list) => sum + (list?.length ?? 0), 0)).toBe(1_000);
    const context = meshContextOf({ meshSpec: spec, dataplanes, policies });
    let resources = 0;
    for (const dp of dataplanes) {
      const config = renderProxyConfig({ context, dataplane: dp, policies: matchPolicies(dp, context.policies) });
      resources += config.listeners.length + config.clusters.length + config.endpoints.length;
    }
    expect(resources).toBeGreaterThan(dataplanes.length * 10);
  });
});
