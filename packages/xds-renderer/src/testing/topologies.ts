// Tests only: meshes that exercise the renderer, from the complete example (web-1 calling backend) to one
// using every policy family, mTLS, logging, tracing, metrics and external services.
import type { DataplaneResource } from '@mesh/policy-matcher';
import type { MeshContext } from '../mesh-context.js';
import type { ProxyMetadata } from '../proxy-state.js';
import { dataplane, externalService, meshContextOf, meshSpec, policy, zoneEgress, zoneIngress } from '../test-fixtures.js';

const svc = (name: string, extra: Record<string, string> = {}) => ({ match: { 'mesh.io/service': name, ...extra } });
const ANY = svc('*');

/** The complete example: web-1 calling backend through a 90/10 split, with timeouts. */
export function specExample(): { context: MeshContext; web1: DataplaneResource } {
  const web1 = dataplane('web-1', {
    address: '10.0.0.1',
    inbound: [{ port: 8080, servicePort: 8081, tags: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' } }],
    outbound: [{ port: 10001, tags: { 'mesh.io/service': 'backend' } }],
  });
  const backend1 = dataplane('backend-1', {
    address: '10.0.0.2',
    inbound: [{ port: 9090, servicePort: 9091, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', version: 'v1' } }],
  });
  const context = meshContextOf({
    dataplanes: [web1, backend1],
    policies: {
      TrafficRoute: [
        policy('TrafficRoute', 'web-to-backend', {
          sources: [svc('web')],
          destinations: [svc('backend')],
          conf: {
            split: [
              { weight: 90, destination: { 'mesh.io/service': 'backend', version: 'v1' } },
              { weight: 10, destination: { 'mesh.io/service': 'backend', version: 'v2' } },
            ],
          },
        }),
      ],
      Timeout: [
        policy('Timeout', 'backend-timeouts', {
          sources: [ANY],
          destinations: [svc('backend')],
          conf: { connectTimeout: '5s', tcp: { idleTimeout: '3600s' }, http: { requestTimeout: '15s', idleTimeout: '3600s', streamIdleTimeout: '1800s' } },
        }),
      ],
    },
  });
  return { context, web1 };
}

export type MtlsMode = 'off' | 'STRICT' | 'PERMISSIVE';

export interface FullTopology {
  readonly context: MeshContext;
  readonly web1: DataplaneResource;
  readonly backend1: DataplaneResource;
  readonly transparent: DataplaneResource;
  readonly metadata: ProxyMetadata;
}

const PEM = { certificatePem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', privateKeyPem: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n' };

const FULL_METADATA: ProxyMetadata = {
  accessLogSocketPath: '/tmp/mesh-al-web-1-default.sock',
  metricsSocketPath: '/tmp/mesh-mh-web-1-default.sock',
  adminTls: { server: PEM, caPem: PEM.certificatePem },
  identity: { ...PEM, caPem: PEM.certificatePem },
};

/** Every policy family, several protocols, an external service with TLS and a transparent proxy. */
export function fullTopology(mtls: MtlsMode, options: { zoneEgress?: boolean } = {}): FullTopology {
  const web1 = dataplane('web-1', {
    address: '10.0.0.1',
    inbound: [
      { port: 8080, servicePort: 8081, tags: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http', version: 'v1' } },
      { port: 8090, tags: { 'mesh.io/service': 'web-grpc', 'mesh.io/protocol': 'grpc' } },
      { port: 8100, tags: { 'mesh.io/service': 'web-tcp' } },
    ],
    outbound: [
      { port: 10001, tags: { 'mesh.io/service': 'backend' } },
      { port: 10002, tags: { 'mesh.io/service': 'redis' } },
      { port: 10003, tags: { 'mesh.io/service': 'httpbin' } },
      { port: 10004, service: 'kafka' },
      { port: 10005, tags: { 'mesh.io/service': 'grpc-api' } },
      { port: 10006, tags: { 'mesh.io/service': 'unrouted' } },
    ],
  });
  const backend1 = dataplane('backend-1', {
    address: '10.0.0.2',
    inbound: [{ port: 9090, servicePort: 9091, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', version: 'v1' } }],
  });
  const backend2 = dataplane('backend-2', {
    address: '10.0.0.3',
    advertisedAddress: '192.168.0.3',
    inbound: [{ port: 9090, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', version: 'v2' } }],
  });
  const backendDown = dataplane('backend-3', {
    address: '10.0.0.4',
    inbound: [{ port: 9090, health: { ready: false }, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', version: 'v2' } }],
  });
  const redis = dataplane('redis-1', { address: '10.0.0.5', inbound: [{ port: 6379, tags: { 'mesh.io/service': 'redis', 'mesh.io/protocol': 'tcp' } }] });
  const kafka = dataplane('kafka-1', { address: '10.0.0.6', inbound: [{ port: 9092, tags: { 'mesh.io/service': 'kafka', 'mesh.io/protocol': 'kafka' } }] });
  const grpcApi = dataplane('grpc-api-1', { address: '10.0.0.7', inbound: [{ port: 7000, tags: { 'mesh.io/service': 'grpc-api', 'mesh.io/protocol': 'grpc' } }] });
  const transparent = dataplane('tp-1', {
    address: '10.0.0.8',
    inbound: [{ port: 8080, tags: { 'mesh.io/service': 'tp', 'mesh.io/protocol': 'http' } }],
    transparentProxying: { redirectPortInbound: 15006, redirectPortOutbound: 15001, redirectPortInboundV6: 15010 },
  });
  const httpbin = externalService('httpbin', {
    networking: { address: 'httpbin.org:443', tls: { enabled: true, caCert: { inlineString: 'CA' }, serverName: 'httpbin.org' } },
    tags: { 'mesh.io/service': 'httpbin', 'mesh.io/protocol': 'http' },
  });
  const mtlsConf =
    mtls === 'off' ? {} : { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin', ...(mtls === 'PERMISSIVE' ? { mode: 'PERMISSIVE' } : {}) }] } };
  const spec = meshSpec({
    ...mtlsConf,
    logging: {
      defaultBackend: 'file',
      backends: [
        { name: 'file', type: 'file', conf: { path: '/var/log/mesh.log' } },
        { name: 'logstash', type: 'tcp', format: '%START_TIME% %MESH_SOURCE_SERVICE% -> %KUMA_DESTINATION_SERVICE%', conf: { address: 'logstash:5000' } },
      ],
    },
    tracing: { defaultBackend: 'zipkin', backends: [{ name: 'zipkin', type: 'zipkin', sampling: 50, conf: { url: 'https://zipkin.local:9411/api/v2/spans' } }] },
    metrics: { enabledBackend: 'prom', backends: [{ name: 'prom', type: 'prometheus', conf: { port: 5670, path: '/metrics', envoy: { filterRegex: 'http2_act.*' } } }] },
    ...(options.zoneEgress ? { routing: { zoneEgress: true } } : {}),
  });
  const t1 = '2023-11-20T11:00:00.000Z';
  const context = meshContextOf({
    meshSpec: spec,
    dataplanes: [web1, backend1, backend2, backendDown, redis, kafka, grpcApi, transparent],
    externalServices: [httpbin],
    policies: {
      TrafficRoute: [
        policy('TrafficRoute', 'route-all-default', { sources: [ANY], destinations: [ANY], conf: { destination: { 'mesh.io/service': '*' } } }),
        policy('TrafficRoute', 'web-to-backend', {
          sources: [svc('web')],
          destinations: [svc('backend')],
          conf: {
            loadBalancer: { leastRequest: { choiceCount: 3 } },
            http: [
              {
                match: { path: { prefix: '/api' }, method: { exact: 'POST' }, headers: { 'x-canary': { exact: 'true' }, 'x-b': { regex: 'b.*' } } },
                modify: {
                  path: { rewritePrefix: '/v2/api' },
                  host: { value: 'backend.internal' },
                  requestHeaders: { add: [{ name: 'x-via', value: 'mesh', append: true }], remove: [{ name: 'x-debug' }] },
                  responseHeaders: { add: [{ name: 'x-served', value: 'yes' }], remove: [{ name: 'server' }] },
                },
                destination: { 'mesh.io/service': 'backend', version: 'v2' },
              },
              { match: { path: { regex: '/static/.*' } }, modify: { path: { regex: { pattern: '^/static', substitution: '/assets' } } }, split: [{ weight: 0, destination: { 'mesh.io/service': 'backend', version: 'v2' } }, { weight: 100, destination: { 'mesh.io/service': 'backend', version: 'v1' } }] },
            ],
            split: [
              { weight: 90, destination: { 'mesh.io/service': 'backend', version: 'v1' } },
              { weight: 10, destination: { 'mesh.io/service': 'backend', version: 'v2' } },
            ],
          },
        }, t1),
        policy('TrafficRoute', 'unrouted-none', { sources: [svc('nobody')], destinations: [svc('unrouted')], conf: { destination: { 'mesh.io/service': 'unrouted' } } }),
        policy('TrafficRoute', 'redis-ring', { sources: [ANY], destinations: [svc('redis')], conf: { loadBalancer: { ringHash: { hashFunction: 'MURMUR_HASH_2', minRingSize: 64, maxRingSize: 1024 } }, destination: { 'mesh.io/service': 'redis' } } }, t1),
      ],
      Timeout: [
        policy('Timeout', 'timeout-all-default', {
          sources: [ANY],
          destinations: [ANY],
          conf: { connectTimeout: '5s', tcp: { idleTimeout: '3600s' }, http: { requestTimeout: '15s', idleTimeout: '3600s', streamIdleTimeout: '1800s', maxStreamDuration: '600s' }, grpc: { streamIdleTimeout: '300s', maxStreamDuration: '900s' } },
        }),
      ],
      Retry: [
        policy('Retry', 'retry-all-default', {
          sources: [ANY],
          destinations: [ANY],
          conf: {
            http: { numRetries: 5, perTryTimeout: '16s', backOff: { baseInterval: '25ms', maxInterval: '250ms' }, retriableStatusCodes: [503, 504], retriableMethods: ['GET', 'PUT'], retryOn: ['all_5xx', 'connect_failure'] },
            grpc: { numRetries: 3, perTryTimeout: '5s', retryOn: ['cancelled', 'resource_exhausted'] },
            tcp: { maxConnectAttempts: 5 },
          },
        }),
      ],
      HealthCheck: [
        policy('HealthCheck', 'backend-hc', {
          sources: [ANY],
          destinations: [svc('backend')],
          conf: {
            interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1, initialJitter: '5s', intervalJitter: '6s', intervalJitterPercent: 10,
            healthyPanicThreshold: 60, failTrafficOnPanic: true, eventLogPath: '/tmp/hc.log', alwaysLogHealthCheckFailures: true, noTrafficInterval: '30s', reuseConnection: false,
            http: { path: '/health', requestHeadersToAdd: [{ header: { key: 'x-hc', value: '1' }, append: false }], expectedStatuses: [200, 204] },
          },
        }),
        policy('HealthCheck', 'redis-hc', {
          sources: [ANY],
          destinations: [svc('redis')],
          conf: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1, tcp: { send: 'UElORw==', receive: ['UE9ORw=='] } },
        }),
      ],
      CircuitBreaker: [
        policy('CircuitBreaker', 'circuit-breaker-all-default', {
          sources: [ANY],
          destinations: [ANY],
          conf: {
            interval: '5s', baseEjectionTime: '30s', maxEjectionPercent: 20, splitExternalAndLocalErrors: true,
            thresholds: { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 },
            detectors: { totalErrors: { consecutive: 20 }, gatewayErrors: { consecutive: 10 }, localErrors: { consecutive: 7 }, standardDeviation: { requestVolume: 10, minimumHosts: 5, factor: 1.9 }, failure: { requestVolume: 10, minimumHosts: 5, threshold: 85 } },
          },
        }),
      ],
      FaultInjection: [
        policy('FaultInjection', 'fi-web', {
          sources: [svc('frontend', { env: 'prod' }), svc('backend')],
          destinations: [svc('web', { 'mesh.io/protocol': 'http' })],
          conf: { delay: { percentage: 50, value: '5s' }, abort: { percentage: 12.5, httpStatus: 503 }, responseBandwidth: { percentage: 33.333, limit: '100 mbps' } },
        }),
      ],
      RateLimit: [
        policy('RateLimit', 'rl-web', { sources: [svc('frontend')], destinations: [svc('web')], conf: { http: { requests: 100, interval: '10s', onRateLimit: { status: 429, headers: [{ key: 'x-limited', value: 'true', append: false }] } } } }),
        policy('RateLimit', 'rl-httpbin', { sources: [ANY], destinations: [svc('httpbin')], conf: { http: { requests: 10, interval: '1s' } } }),
      ],
      TrafficPermission: [
        policy('TrafficPermission', 'allow-all-default', { sources: [ANY], destinations: [ANY] }),
        policy('TrafficPermission', 'web-from-frontend', { sources: [svc('frontend', { env: 'prod', team: 'a' }), svc('gateway')], destinations: [svc('web')] }),
      ],
      TrafficLog: [
        policy('TrafficLog', 'log-all', { sources: [ANY], destinations: [ANY] }),
        policy('TrafficLog', 'log-redis', { sources: [ANY], destinations: [svc('redis')], conf: { backend: 'logstash' } }),
      ],
      TrafficTrace: [policy('TrafficTrace', 'trace-all', { selectors: [ANY] })],
    },
    extra: {
      tlsReadyServices: ['backend', 'redis'],
      zoneEgresses: [zoneEgress('egress-1', { networking: { address: '10.0.1.1', port: 10002 } })],
      zoneIngresses: [
        zoneIngress('ingress-east', {
          zone: 'east',
          networking: { address: '10.1.0.1', port: 10001, advertisedAddress: '203.0.113.1', advertisedPort: 10001 },
          availableServices: [{ tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', version: 'v3' }, instances: 2, mesh: 'default' }],
        }),
      ],
      localZone: 'west',
    },
  });
  return { context, web1, backend1, transparent, metadata: FULL_METADATA };
}

