// MeshRetry on web-1: route retry policies of HTTP and gRPC outbounds, connect attempts of TCP ones.
import { describe, expect, it } from 'vitest';
import type { JsonObject, Listener } from '../envoy.js';
import { targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const topology = targetRefTopology('STRICT');

const retries = targetRefPolicy('MeshRetry', 'web-retries', {
  targetRef: { kind: 'Mesh' },
  to: [
    { targetRef: { kind: 'Mesh' }, default: { http: { numRetries: 2 }, grpc: { numRetries: 4, retryOn: ['Unavailable', 'DeadlineExceeded'], backOff: { baseInterval: '100ms' } }, tcp: { maxConnectAttempt: 7 } } },
    {
      targetRef: { kind: 'MeshService', name: 'backend' },
      default: {
        http: {
          numRetries: 3,
          perTryTimeout: '2s',
          backOff: { baseInterval: '50ms', maxInterval: '1s' },
          rateLimitedBackOff: { resetHeaders: [{ name: 'retry-after', format: 'Seconds' }], maxInterval: '30s' },
          retryOn: ['5xx', 'GatewayError', '503', 'HttpMethodGet'],
          retriableRequestHeaders: [{ name: 'x-retry', type: 'Present' }],
          retriableResponseHeaders: [{ name: 'x-upstream', type: 'Prefix', value: 'fail' }],
          hostSelection: [{ predicate: 'OmitPreviousHosts' }, { predicate: 'OmitHostsWithTags', tags: { version: 'v1' } }, { predicate: 'OmitPreviousPriorities', updateFrequency: 2 }],
          hostSelectionMaxAttempts: 3,
        },
      },
    },
  ],
});

const before = topology.render(topology.web1, {});
const after = topology.render(topology.web1, { MeshRetry: [retries] });
const chainOf = (name: string) => ((after.listeners.find((listener) => listener.name === name) as Listener).filterChains as JsonObject[])[0] as JsonObject;
const routesOf = (name: string) => ((((chainOf(name).filters as JsonObject[])[0]?.typedConfig as JsonObject).routeConfig as JsonObject).virtualHosts as JsonObject[])[0]?.routes as JsonObject[];

describe('MeshRetry', () => {
  it('sets retry policies as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-retry.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('puts status codes and methods of `retryOn` where Envoy takes them', () => {
    expect(routesOf('outbound:127.0.0.1:10001')[0]?.route).toMatchObject({
      retryPolicy: {
        retryOn: '5xx,gateway-error,retriable-status-codes',
        retriableStatusCodes: [503],
        numRetries: 3,
        perTryTimeout: '2s',
        retriableRequestHeaders: [{ name: ':method', stringMatch: { exact: 'GET' } }, { name: 'x-retry', presentMatch: true }],
      },
    });
  });

  it('retries gRPC on its own conditions and TCP connections as many times as told', () => {
    expect(routesOf('outbound:127.0.0.1:10003')[0]?.route).toMatchObject({ retryPolicy: { retryOn: 'unavailable,deadline-exceeded', numRetries: 4, retryBackOff: { baseInterval: '0.100s' } } });
    expect(((chainOf('outbound:127.0.0.1:10002').filters as JsonObject[])[0]?.typedConfig as JsonObject).maxConnectAttempts).toBe(7);
  });
});
