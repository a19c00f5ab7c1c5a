// Every targetRef policy kind at once, on every kind of proxy of the topology.
import { targetRefPolicyKinds } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import { renderProxyConfig } from '../proxy.js';
import { targetRefMatchOf, targetRefPolicy } from '../test-fixtures.js';
import { expectEnvoyAccepts } from '../testing/golden.js';
import type { MtlsMode } from '../testing/topologies.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';
import { TARGET_REF_PLUGINS } from './index.js';

const mesh = { kind: 'Mesh' };
const backend = { kind: 'MeshService', name: 'backend' };

/** One policy of each kind, all selecting web-1 (and most the other proxies). */
const everyKind = {
  MeshAccessLog: [targetRefPolicy('MeshAccessLog', 'logs', { targetRef: mesh, from: [{ targetRef: mesh, default: { backends: [{ type: 'File', file: { path: '/tmp/in.log' } }] } }], to: [{ targetRef: mesh, default: { backends: [{ type: 'OpenTelemetry', openTelemetry: { endpoint: 'otel:4317' } }] } }] })],
  MeshCircuitBreaker: [targetRefPolicy('MeshCircuitBreaker', 'breaker', { targetRef: mesh, to: [{ targetRef: mesh, default: { connectionLimits: { maxConnections: 10 }, outlierDetection: { detectors: { totalFailures: { consecutive: 3 } } } } }] })],
  MeshFaultInjection: [targetRefPolicy('MeshFaultInjection', 'faults', { targetRef: mesh, from: [{ targetRef: { kind: 'MeshService', name: 'chaos' }, default: { http: [{ abort: { httpStatus: 500, percentage: 50 } }] } }] })],
  MeshHealthCheck: [targetRefPolicy('MeshHealthCheck', 'checks', { targetRef: mesh, to: [{ targetRef: mesh, default: { http: { path: '/ready' }, tcp: {} } }] })],
  MeshHTTPRoute: [targetRefPolicy('MeshHTTPRoute', 'route', { targetRef: mesh, to: [{ targetRef: backend, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v2' } }], default: { backendRefs: [{ kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v2' } }] } }] }] })],
  MeshLoadBalancingStrategy: [targetRefPolicy('MeshLoadBalancingStrategy', 'lb', { targetRef: mesh, to: [{ targetRef: backend, default: { loadBalancer: { type: 'RingHash', ringHash: { hashPolicies: [{ type: 'Header', header: { name: 'x-user' } }] } }, localityAwareness: { localZone: { affinityTags: [{ key: 'version' }] } } } }] })],
  MeshProxyPatch: [targetRefPolicy('MeshProxyPatch', 'patch', { targetRef: mesh, default: { appendModifications: [{ cluster: { match: { origin: 'outbound' }, operation: 'Patch', value: 'perConnectionBufferLimitBytes: 65536' } }] } })],
  MeshRateLimit: [targetRefPolicy('MeshRateLimit', 'limits', { targetRef: mesh, from: [{ targetRef: mesh, default: { local: { http: { requestRate: { num: 100, interval: '1s' } }, tcp: { connectionRate: { num: 10, interval: '1s' } } } } }] })],
  MeshRetry: [targetRefPolicy('MeshRetry', 'retries', { targetRef: mesh, to: [{ targetRef: mesh, default: { http: { numRetries: 2 }, tcp: { maxConnectAttempt: 2 }, grpc: { numRetries: 2 } } }] })],
  MeshTCPRoute: [targetRefPolicy('MeshTCPRoute', 'tcp', { targetRef: mesh, to: [{ targetRef: { kind: 'MeshService', name: 'redis' } }] })],
  MeshTimeout: [targetRefPolicy('MeshTimeout', 'timeouts', { targetRef: mesh, from: [{ targetRef: mesh, default: { idleTimeout: '1h' } }], to: [{ targetRef: mesh, default: { connectionTimeout: '2s', http: { requestTimeout: '10s' } } }] })],
  MeshTrace: [targetRefPolicy('MeshTrace', 'trace', { targetRef: mesh, default: { backends: [{ type: 'Zipkin', zipkin: { url: 'http://zipkin:9411/api/v2/spans' } }] } })],
  MeshTrafficPermission: [targetRefPolicy('MeshTrafficPermission', 'allow', { targetRef: mesh, from: [{ targetRef: mesh, default: { action: 'Allow' } }] })],
};

describe('every targetRef policy at once', () => {
  it('has a module for every targetRef kind of the registry, in the reference order', () => {
    expect(TARGET_REF_PLUGINS.map(([kind]) => kind).sort()).toEqual(targetRefPolicyKinds().map((kind) => kind.name).sort());
    expect(TARGET_REF_PLUGINS[0]?.[0]).toBe('MeshHTTPRoute');
    expect(TARGET_REF_PLUGINS.at(-1)?.[0]).toBe('MeshProxyPatch');
  });

  for (const mtls of ['off', 'STRICT', 'PERMISSIVE'] as MtlsMode[]) {
    for (const zoneEgress of mtls === 'off' ? [false] : [false, true]) {
      it(`renders valid Envoy resources for every proxy, mTLS ${mtls}${zoneEgress ? ', through zone egress' : ''}`, () => {
        const topology = targetRefTopology(mtls, { zoneEgress });
        for (const proxy of [topology.web1, topology.backend1, topology.transparent]) {
          const config = topology.render(proxy, everyKind);
          expectEnvoyAccepts(config);
          expect(config).not.toEqual(topology.render(proxy, {}));
        }
      });
    }
  }

  it('renders a proxy no targetRef policy selects as without any', () => {
    const topology = targetRefTopology('STRICT');
    const match = targetRefMatchOf(topology.context, topology.web1, {});
    expect(match.kinds).toEqual([]);
    expect(renderProxyConfig({ context: topology.context, dataplane: topology.web1, metadata: topology.metadata, targetRef: match })).toEqual(
      renderProxyConfig({ context: topology.context, dataplane: topology.web1, metadata: topology.metadata }),
    );
  });
});
