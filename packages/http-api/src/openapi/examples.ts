// One example resource per kind, for the OpenAPI document's examples. Together they form one small
// mesh (`demo`: a web proxy, policies toward its backend, a gateway, a zone with its ingress and
// egress), so every documented request succeeds once the examples before it have been sent; the
// OpenAPI test sends them all. A kind without an example here is documented without one, and
// that test names it.
import type { AnyKind } from '@mesh/model';

export interface KindExample {
  /** The mesh of a mesh-scoped kind. */
  mesh?: string;
  name: string;
  /** The kind's fields (`{spec}` for a targetRef policy), as a `PUT` body carries them beside `type`, `mesh` and `name`. */
  spec: Record<string, unknown>;
}

/** The mesh every mesh-scoped example lives in; the Mesh example creates it. */
export const EXAMPLE_MESH = 'demo';
/** The service of the example proxy, so its service insight exists. */
export const EXAMPLE_SERVICE = 'web';

const FROM_WEB = [{ match: { 'mesh.io/service': 'web' } }];
const TO_BACKEND = [{ match: { 'mesh.io/service': 'backend' } }];
const EVERY_SERVICE = [{ match: { 'mesh.io/service': '*' } }];
const inMesh = (name: string, spec: Record<string, unknown>): KindExample => ({ mesh: EXAMPLE_MESH, name, spec });
const MESH = { kind: 'Mesh' };
const WEB = { kind: 'MeshService', name: EXAMPLE_SERVICE };
const BACKEND = { kind: 'MeshService', name: 'backend' };

// Keyed by kind name: examples are documentation, kept beside the document rather than in the model.
const EXAMPLES: Readonly<Record<string, KindExample>> = {
  Mesh: {
    name: EXAMPLE_MESH,
    spec: {
      mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] },
      logging: { defaultBackend: 'file', backends: [{ name: 'file', type: 'file', conf: { path: '/tmp/access.log' } }] },
      tracing: { defaultBackend: 'zipkin', backends: [{ name: 'zipkin', type: 'zipkin', conf: { url: 'http://zipkin.local:9411/api/v2/spans' } }] },
    },
  },
  Dataplane: inMesh('web-1', {
    networking: {
      address: '10.0.0.1',
      inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': EXAMPLE_SERVICE, 'mesh.io/protocol': 'http' } }],
      outbound: [{ port: 10001, service: 'backend' }],
    },
  }),
  HealthCheck: inMesh('backend-health', { sources: FROM_WEB, destinations: TO_BACKEND, conf: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 } }),
  TrafficPermission: inMesh('web-to-backend', { sources: FROM_WEB, destinations: TO_BACKEND }),
  TrafficLog: inMesh('web-logs', { sources: FROM_WEB, destinations: EVERY_SERVICE, conf: { backend: 'file' } }),
  TrafficRoute: inMesh('web-to-backend', {
    sources: FROM_WEB,
    destinations: TO_BACKEND,
    conf: {
      split: [
        { weight: 90, destination: { 'mesh.io/service': 'backend', version: 'v1' } },
        { weight: 10, destination: { 'mesh.io/service': 'backend', version: 'v2' } },
      ],
    },
  }),
  TrafficTrace: inMesh('web-traces', { selectors: FROM_WEB, conf: { backend: 'zipkin' } }),
  FaultInjection: inMesh('backend-delay', {
    sources: FROM_WEB,
    destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' } }],
    conf: { delay: { percentage: 50, value: '0.100s' } },
  }),
  Retry: inMesh('backend-retry', { sources: FROM_WEB, destinations: TO_BACKEND, conf: { http: { numRetries: 3, perTryTimeout: '2s' } } }),
  Timeout: inMesh('backend-timeout', { sources: FROM_WEB, destinations: TO_BACKEND, conf: { connectTimeout: '5s', http: { requestTimeout: '15s' } } }),
  ProxyTemplate: inMesh('web-template', { selectors: FROM_WEB, conf: { imports: ['default-proxy'] } }),
  CircuitBreaker: inMesh('backend-breaker', { sources: FROM_WEB, destinations: TO_BACKEND, conf: { thresholds: { maxConnections: 100, maxRequests: 100 } } }),
  RateLimit: inMesh('backend-limit', { sources: FROM_WEB, destinations: TO_BACKEND, conf: { http: { requests: 100, interval: '10s' } } }),
  VirtualOutbound: inMesh('service-hostnames', {
    selectors: EVERY_SERVICE,
    conf: { host: '{{.svc}}.mesh', port: '80', parameters: [{ name: 'svc', tagKey: 'mesh.io/service' }] },
  }),
  MeshGateway: inMesh('edge', { selectors: [{ match: { 'mesh.io/service': 'edge' } }], conf: { listeners: [{ port: 8080, protocol: 'HTTP', hostname: 'example.com' }] } }),
  MeshGatewayRoute: inMesh('edge-to-web', {
    selectors: [{ match: { 'mesh.io/service': 'edge' } }],
    conf: { http: { rules: [{ matches: [{ path: { match: 'PREFIX', value: '/' } }], backends: [{ weight: 1, destination: { 'mesh.io/service': EXAMPLE_SERVICE } }] }] } },
  }),
  // The targetRef policies carry their spec under `spec`.
  MeshAccessLog: inMesh('web-access-log', { spec: { targetRef: WEB, from: [{ targetRef: MESH, default: { backends: [{ type: 'File', file: { path: '/tmp/access.log' } }] } }] } }),
  MeshCircuitBreaker: inMesh('backend-breaker', { spec: { targetRef: MESH, to: [{ targetRef: BACKEND, default: { connectionLimits: { maxConnections: 1024, maxRequests: 1024 } } }] } }),
  MeshFaultInjection: inMesh('backend-faults', { spec: { targetRef: BACKEND, from: [{ targetRef: WEB, default: { http: [{ abort: { httpStatus: 503, percentage: 10 } }] } }] } }),
  MeshHealthCheck: inMesh('backend-health', { spec: { targetRef: MESH, to: [{ targetRef: BACKEND, default: { interval: '10s', http: { path: '/health' } } }] } }),
  MeshHTTPRoute: inMesh('web-to-backend', {
    spec: {
      targetRef: WEB,
      to: [
        {
          targetRef: BACKEND,
          rules: [
            {
              matches: [{ path: { value: '/api', type: 'PathPrefix' } }],
              default: {
                backendRefs: [
                  { kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v1' }, weight: 90 },
                  { kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v2' }, weight: 10 },
                ],
              },
            },
          ],
        },
      ],
    },
  }),
  MeshLoadBalancingStrategy: inMesh('backend-balancing', { spec: { targetRef: MESH, to: [{ targetRef: BACKEND, default: { loadBalancer: { type: 'LeastRequest' } } }] } }),
  MeshProxyPatch: inMesh('backend-connect-timeout', {
    spec: { targetRef: WEB, default: { appendModifications: [{ cluster: { match: { name: 'backend' }, operation: 'Patch', value: 'connectTimeout: 5s' } }] } },
  }),
  MeshRateLimit: inMesh('backend-limit', { spec: { targetRef: BACKEND, from: [{ targetRef: MESH, default: { local: { http: { requestRate: { num: 100, interval: '10s' } } } } }] } }),
  MeshRetry: inMesh('backend-retry', { spec: { targetRef: MESH, to: [{ targetRef: BACKEND, default: { http: { numRetries: 3, retryOn: ['5xx'] } } }] } }),
  MeshTCPRoute: inMesh('web-to-backend-tcp', { spec: { targetRef: WEB, to: [{ targetRef: BACKEND, rules: [{ default: { backendRefs: [{ kind: 'MeshService', name: 'backend-v2' }] } }] }] } }),
  MeshTimeout: inMesh('backend-timeout', { spec: { targetRef: MESH, to: [{ targetRef: BACKEND, default: { connectionTimeout: '5s', http: { requestTimeout: '15s' } } }] } }),
  MeshTrace: inMesh('web-traces', { spec: { targetRef: WEB, default: { backends: [{ type: 'Zipkin', zipkin: { url: 'http://zipkin.local:9411/api/v2/spans' } }] } } }),
  MeshTrafficPermission: inMesh('web-to-backend', { spec: { targetRef: BACKEND, from: [{ targetRef: WEB, default: { action: 'Allow' } }] } }),
  ExternalService: inMesh('httpbin', { networking: { address: 'httpbin.org:443', tls: { enabled: true } }, tags: { 'mesh.io/service': 'httpbin', 'mesh.io/protocol': 'http' } }),
  Secret: inMesh('db-password', { data: 'c2VjcmV0' }),
  GlobalSecret: { name: 'license', spec: { data: 'c2VjcmV0' } },
  Zone: { name: 'zone-1', spec: { enabled: true } },
  ZoneIngress: {
    name: 'ingress-1',
    spec: {
      zone: 'zone-1',
      networking: { address: '192.168.0.1', port: 10001, advertisedAddress: '10.0.0.1', advertisedPort: 10000 },
      availableServices: [{ tags: { 'mesh.io/service': 'backend' }, instances: 2, mesh: EXAMPLE_MESH }],
    },
  },
  ZoneEgress: { name: 'egress-1', spec: { zone: 'zone-1', networking: { address: '192.168.0.2', port: 10002 } } },
  // Runtime state: present once the proxy or zone has connected, never written through the API.
  DataplaneInsight: inMesh('web-1', {}),
  ZoneInsight: { name: 'zone-1', spec: {} },
  ZoneIngressInsight: { name: 'ingress-1', spec: {} },
  ZoneEgressInsight: { name: 'egress-1', spec: {} },
};

export const exampleOf = (kind: AnyKind): KindExample | undefined => EXAMPLES[kind.name];

/** The example's path captures: `{mesh, name}` or `{name}`. */
export const exampleParams = (example: KindExample): Record<string, string> =>
  example.mesh !== undefined ? { mesh: example.mesh, name: example.name } : { name: example.name };

/** The example as a `PUT` body. */
export const exampleBody = (kind: AnyKind, example: KindExample): Record<string, unknown> => ({
  type: kind.acceptedTypes[0],
  ...(example.mesh !== undefined ? { mesh: example.mesh } : {}),
  name: example.name,
  ...example.spec,
});
