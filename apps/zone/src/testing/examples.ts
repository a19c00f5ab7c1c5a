// A valid body for every writable kind, as an operator would write it, with its collection
// path. The end-to-end tests create, update, list and delete each one over HTTP.
const ALL = [{ match: { 'mesh.io/service': '*' } }];
const TO_BACKEND = [{ match: { 'mesh.io/service': 'backend' } }];
const MESH = { kind: 'Mesh' };
const WEB = { kind: 'MeshService', name: 'web' };
const BACKEND = { kind: 'MeshService', name: 'backend' };

export interface Example {
  type: string;
  /** Collection path; `{mesh}` is replaced by the mesh. */
  path: string;
  meshScoped: boolean;
  /** The body's fields beside its meta: the spec's fields, or `{spec}` for a targetRef policy. */
  spec: Record<string, unknown>;
  /** A change applied on update, to see it stored. */
  update: Record<string, unknown>;
}

export const EXAMPLES: Example[] = [
  {
    type: 'Mesh',
    path: '/meshes',
    meshScoped: false,
    spec: { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } },
    update: { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] }, networking: { outbound: { passthrough: false } } },
  },
  {
    type: 'Dataplane',
    path: '/meshes/{mesh}/dataplanes',
    meshScoped: true,
    spec: {
      networking: {
        address: '10.0.0.1',
        inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' } }],
        outbound: [{ port: 10001, service: 'backend' }],
      },
    },
    update: { networking: { address: '10.0.0.2', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }] } },
  },
  {
    type: 'HealthCheck',
    path: '/meshes/{mesh}/health-checks',
    meshScoped: true,
    spec: { sources: ALL, destinations: TO_BACKEND, conf: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 } },
    update: { sources: ALL, destinations: TO_BACKEND, conf: { interval: '20s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 } },
  },
  {
    type: 'TrafficPermission',
    path: '/meshes/{mesh}/traffic-permissions',
    meshScoped: true,
    spec: { sources: ALL, destinations: ALL },
    update: { sources: [{ match: { 'mesh.io/service': 'web' } }], destinations: ALL },
  },
  {
    type: 'TrafficLog',
    path: '/meshes/{mesh}/traffic-logs',
    meshScoped: true,
    spec: { sources: ALL, destinations: ALL, conf: { backend: 'file' } },
    update: { sources: ALL, destinations: ALL, conf: { backend: 'tcp' } },
  },
  {
    type: 'TrafficRoute',
    path: '/meshes/{mesh}/traffic-routes',
    meshScoped: true,
    spec: {
      sources: ALL,
      destinations: TO_BACKEND,
      conf: {
        split: [
          { weight: 90, destination: { 'mesh.io/service': 'backend', version: 'v1' } },
          { weight: 10, destination: { 'mesh.io/service': 'backend', version: 'v2' } },
        ],
      },
    },
    update: { sources: ALL, destinations: TO_BACKEND, conf: { destination: { 'mesh.io/service': 'backend' } } },
  },
  {
    type: 'TrafficTrace',
    path: '/meshes/{mesh}/traffic-traces',
    meshScoped: true,
    spec: { selectors: ALL, conf: { backend: 'zipkin' } },
    update: { selectors: ALL, conf: { backend: 'jaeger' } },
  },
  {
    type: 'FaultInjection',
    path: '/meshes/{mesh}/fault-injections',
    meshScoped: true,
    spec: {
      sources: ALL,
      destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' } }],
      conf: { delay: { percentage: 50, value: '0.100s' } },
    },
    update: {
      sources: ALL,
      destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' } }],
      conf: { abort: { percentage: 10, httpStatus: 500 } },
    },
  },
  {
    type: 'Retry',
    path: '/meshes/{mesh}/retries',
    meshScoped: true,
    spec: { sources: ALL, destinations: TO_BACKEND, conf: { http: { numRetries: 3, perTryTimeout: '2s' } } },
    update: { sources: ALL, destinations: TO_BACKEND, conf: { tcp: { maxConnectAttempts: 2 } } },
  },
  {
    type: 'Timeout',
    path: '/meshes/{mesh}/timeouts',
    meshScoped: true,
    spec: { sources: ALL, destinations: TO_BACKEND, conf: { connectTimeout: '5s', http: { requestTimeout: '15s' } } },
    update: { sources: ALL, destinations: TO_BACKEND, conf: { connectTimeout: "3s", tcp: { idleTimeout: "3600s" } } },
  },
  {
    type: 'ProxyTemplate',
    path: '/meshes/{mesh}/proxytemplates',
    meshScoped: true,
    spec: { selectors: TO_BACKEND, conf: { imports: ['default-proxy'] } },
    update: { selectors: ALL, conf: { imports: ['default-proxy'] } },
  },
  {
    type: 'CircuitBreaker',
    path: '/meshes/{mesh}/circuit-breakers',
    meshScoped: true,
    spec: {
      sources: ALL,
      destinations: TO_BACKEND,
      conf: {
        interval: '5s',
        baseEjectionTime: '30s',
        maxEjectionPercent: 20,
        detectors: { totalErrors: { consecutive: 20 }, standardDeviation: { requestVolume: 10, minimumHosts: 5, factor: 1.9 } },
        thresholds: { maxConnections: 2, maxPendingRequests: 2, maxRequests: 2, maxRetries: 2 },
      },
    },
    update: { sources: ALL, destinations: TO_BACKEND, conf: { thresholds: { maxConnections: 4 } } },
  },
  {
    type: 'RateLimit',
    path: '/meshes/{mesh}/rate-limits',
    meshScoped: true,
    spec: {
      sources: [{ match: { 'mesh.io/service': 'frontend' } }],
      destinations: TO_BACKEND,
      conf: { http: { requests: 100, interval: '10s', onRateLimit: { status: 429, headers: [{ key: 'x-limited', value: 'true', append: true }] } } },
    },
    update: { sources: ALL, destinations: TO_BACKEND, conf: { http: { requests: 50, interval: '1s' } } },
  },
  {
    type: 'VirtualOutbound',
    path: '/meshes/{mesh}/virtual-outbounds',
    meshScoped: true,
    spec: {
      selectors: ALL,
      conf: {
        host: '{{.svc}}.{{.inst}}.mesh',
        port: '8080',
        parameters: [
          { name: 'svc', tagKey: 'mesh.io/service' },
          { name: 'inst', tagKey: 'mesh.io/instance' },
        ],
      },
    },
    update: { selectors: ALL, conf: { host: '{{.svc}}.mesh', port: '80', parameters: [{ name: 'svc', tagKey: 'mesh.io/service' }] } },
  },
  {
    type: 'MeshGateway',
    path: '/meshes/{mesh}/meshgateways',
    meshScoped: true,
    spec: {
      selectors: [{ match: { 'mesh.io/service': 'edge-gateway' } }],
      tags: { product: 'edge' },
      conf: {
        listeners: [
          { port: 8080, protocol: 'HTTP', hostname: 'foo.example.com', tags: { port: 'http-8080' } },
          { port: 8443, protocol: 'HTTPS', hostname: '*', tls: { mode: 'TERMINATE', certificates: [{ secret: 'edge-cert' }] }, resources: { connectionLimit: 100 } },
        ],
      },
    },
    update: { selectors: [{ match: { 'mesh.io/service': 'edge-gateway' } }], conf: { listeners: [{ port: 8080, protocol: 'HTTP' }] } },
  },
  {
    type: 'MeshGatewayRoute',
    path: '/meshes/{mesh}/meshgatewayroutes',
    meshScoped: true,
    spec: {
      selectors: [{ match: { 'mesh.io/service': 'edge-gateway' } }],
      conf: {
        http: {
          hostnames: ['foo.example.com'],
          rules: [
            {
              matches: [{ path: { match: 'PREFIX', value: '/api' } }],
              filters: [{ requestHeader: { set: [{ name: 'x-env', value: 'prod' }] } }],
              backends: [{ weight: 1, destination: { 'mesh.io/service': 'backend' } }],
            },
          ],
        },
      },
    },
    update: {
      selectors: [{ match: { 'mesh.io/service': 'edge-gateway' } }],
      conf: { tcp: { rules: [{ backends: [{ weight: 1, destination: { 'mesh.io/service': 'backend' } }] }] } },
    },
  },
  // The targetRef policies carry their spec under `spec`.
  {
    type: 'MeshAccessLog',
    path: '/meshes/{mesh}/meshaccesslogs',
    meshScoped: true,
    spec: { spec: { targetRef: MESH, from: [{ targetRef: MESH, default: { backends: [{ type: 'File', file: { path: '/tmp/access.log' } }] } }] } },
    update: {
      spec: {
        targetRef: WEB,
        to: [{ targetRef: BACKEND, default: { backends: [{ type: 'Tcp', tcp: { format: { type: 'Plain', plain: '[%START_TIME%] %UPSTREAM_HOST%' }, address: '127.0.0.1:5000' } }] } }],
      },
    },
  },
  {
    type: 'MeshCircuitBreaker',
    path: '/meshes/{mesh}/meshcircuitbreakers',
    meshScoped: true,
    spec: {
      spec: {
        targetRef: MESH,
        to: [
          {
            targetRef: MESH,
            default: {
              connectionLimits: { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 },
              outlierDetection: { interval: '5s', baseEjectionTime: '30s', maxEjectionPercent: 20, detectors: { totalFailures: { consecutive: 5 } } },
            },
          },
        ],
      },
    },
    update: { spec: { targetRef: WEB, from: [{ targetRef: MESH, default: { connectionLimits: { maxConnections: 100 } } }] } },
  },
  {
    type: 'MeshFaultInjection',
    path: '/meshes/{mesh}/meshfaultinjections',
    meshScoped: true,
    spec: { spec: { targetRef: BACKEND, from: [{ targetRef: WEB, default: { http: [{ abort: { httpStatus: 503, percentage: 10 } }] } }] } },
    update: { spec: { targetRef: BACKEND, from: [{ targetRef: MESH, default: { http: [{ delay: { value: '5s', percentage: '50.5' } }] } }] } },
  },
  {
    type: 'MeshHealthCheck',
    path: '/meshes/{mesh}/meshhealthchecks',
    meshScoped: true,
    spec: {
      spec: {
        targetRef: MESH,
        to: [{ targetRef: BACKEND, default: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1, http: { path: '/health', expectedStatuses: [200] } } }],
      },
    },
    update: { spec: { targetRef: MESH, to: [{ targetRef: BACKEND, default: { interval: '1m0s', tcp: {} } }] } },
  },
  {
    type: 'MeshHTTPRoute',
    path: '/meshes/{mesh}/meshhttproutes',
    meshScoped: true,
    spec: {
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
    },
    update: {
      spec: {
        targetRef: WEB,
        to: [
          {
            targetRef: BACKEND,
            rules: [{ matches: [{ method: 'GET' }], default: { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-env', value: 'prod' }] } }] } }],
          },
        ],
      },
    },
  },
  {
    type: 'MeshLoadBalancingStrategy',
    path: '/meshes/{mesh}/meshloadbalancingstrategies',
    meshScoped: true,
    spec: { spec: { targetRef: MESH, to: [{ targetRef: BACKEND, default: { loadBalancer: { type: 'RingHash', ringHash: { hashPolicies: [{ type: 'Header', header: { name: 'x-user' } }] } } } }] } },
    update: { spec: { targetRef: MESH, to: [{ targetRef: BACKEND, default: { localityAwareness: { disabled: true } } }] } },
  },
  {
    type: 'MeshProxyPatch',
    path: '/meshes/{mesh}/meshproxypatches',
    meshScoped: true,
    spec: { spec: { targetRef: MESH, default: { appendModifications: [{ cluster: { match: { name: 'backend' }, operation: 'Patch', value: 'connectTimeout: 5s\n' } }] } } },
    update: { spec: { targetRef: WEB, default: { appendModifications: [{ httpFilter: { match: { name: 'envoy.filters.http.gzip' }, operation: 'Remove' } }] } } },
  },
  {
    type: 'MeshRateLimit',
    path: '/meshes/{mesh}/meshratelimits',
    meshScoped: true,
    spec: { spec: { targetRef: BACKEND, from: [{ targetRef: MESH, default: { local: { http: { requestRate: { num: 100, interval: '10s' }, onRateLimit: { status: 429 } } } } }] } },
    update: { spec: { targetRef: BACKEND, from: [{ targetRef: MESH, default: { local: { tcp: { connectionRate: { num: 10, interval: '1s' } } } } }] } },
  },
  {
    type: 'MeshRetry',
    path: '/meshes/{mesh}/meshretries',
    meshScoped: true,
    spec: { spec: { targetRef: MESH, to: [{ targetRef: MESH, default: { http: { numRetries: 3, perTryTimeout: '2s', retryOn: ['5xx', 'Reset'] } } }] } },
    update: { spec: { targetRef: MESH, to: [{ targetRef: BACKEND, default: { tcp: { maxConnectAttempt: 2 } } }] } },
  },
  {
    type: 'MeshTCPRoute',
    path: '/meshes/{mesh}/meshtcproutes',
    meshScoped: true,
    spec: { spec: { targetRef: WEB, to: [{ targetRef: BACKEND, rules: [{ default: { backendRefs: [{ kind: 'MeshService', name: 'backend-v2' }] } }] }] } },
    update: { spec: { targetRef: MESH, to: [{ targetRef: BACKEND }] } },
  },
  {
    type: 'MeshTimeout',
    path: '/meshes/{mesh}/meshtimeouts',
    meshScoped: true,
    spec: {
      spec: {
        targetRef: MESH,
        to: [{ targetRef: MESH, default: { connectionTimeout: '5s', idleTimeout: '1h0m0s', http: { requestTimeout: '15s', streamIdleTimeout: '30m0s' } } }],
        from: [{ targetRef: MESH, default: { idleTimeout: '2h0m0s' } }],
      },
    },
    update: { spec: { targetRef: BACKEND, from: [{ targetRef: MESH, default: { http: { requestTimeout: '1s' } } }] } },
  },
  {
    type: 'MeshTrace',
    path: '/meshes/{mesh}/meshtraces',
    meshScoped: true,
    spec: { spec: { targetRef: MESH, default: { backends: [{ type: 'Zipkin', zipkin: { url: 'http://zipkin.mesh:9411/api/v2/spans' } }], sampling: { overall: 80 } } } },
    update: { spec: { targetRef: WEB, default: { backends: [{ type: 'Datadog', datadog: { url: 'http://datadog:8126' } }] } } },
  },
  {
    type: 'MeshTrafficPermission',
    path: '/meshes/{mesh}/meshtrafficpermissions',
    meshScoped: true,
    spec: { spec: { targetRef: MESH, from: [{ targetRef: MESH, default: { action: 'Allow' } }] } },
    update: { spec: { targetRef: BACKEND, from: [{ targetRef: WEB, default: { action: 'Deny' } }] } },
  },
  {
    type: 'ExternalService',
    path: '/meshes/{mesh}/external-services',
    meshScoped: true,
    spec: { networking: { address: 'httpbin.org:443', tls: { enabled: true } }, tags: { 'mesh.io/service': 'httpbin', 'mesh.io/protocol': 'http' } },
    update: { networking: { address: 'httpbin.org:80' }, tags: { 'mesh.io/service': 'httpbin' } },
  },
  {
    type: 'Secret',
    path: '/meshes/{mesh}/secrets',
    meshScoped: true,
    spec: { data: 'c2VjcmV0' },
    update: { data: 'b3RoZXI=' },
  },
  {
    type: 'Secret',
    path: '/global-secrets',
    meshScoped: false,
    spec: { data: 'c2VjcmV0' },
    update: { data: 'b3RoZXI=' },
  },
  { type: 'Zone', path: '/zones', meshScoped: false, spec: { enabled: true }, update: { enabled: false } },
  {
    type: 'ZoneIngress',
    path: '/zone-ingresses',
    meshScoped: false,
    spec: {
      networking: { address: '192.168.0.1', port: 10001, advertisedAddress: '10.0.0.1', advertisedPort: 10000 },
      availableServices: [{ tags: { 'mesh.io/service': 'backend' }, instances: 2, mesh: 'default' }],
    },
    update: { networking: { address: '192.168.0.1', port: 10002 } },
  },
  {
    type: 'ZoneEgress',
    path: '/zoneegresses',
    meshScoped: false,
    spec: { networking: { address: '192.168.0.2', port: 10002 } },
    update: { networking: { address: '192.168.0.3', port: 10002 } },
  },
];
