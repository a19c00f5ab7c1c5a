// Property tests over generated meshes (with targetRef routes, access logs and traces or not):
// every cluster a listener or route names exists, every endpoint set belongs to an EDS cluster
// (and each EDS cluster has one), and Envoy's message definitions accept everything.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonValue, TypedObject } from './envoy.js';
import { renderProxyConfig, type ProxyConfig } from './proxy.js';
import { dataplane, externalService, meshContextOf, meshSpec, policy, targetRefMatchOf, targetRefPolicy } from './test-fixtures.js';
import { envoySchemaErrors } from './testing/envoy-schema.js';

const SERVICES = ['web', 'backend', 'redis', 'payments', 'search'];
const PROTOCOLS = [undefined, 'http', 'http2', 'grpc', 'tcp', 'kafka'];
const VERSIONS = ['v1', 'v2', 'v3'];

const instanceArb = fc.record({
  service: fc.constantFrom(...SERVICES),
  protocol: fc.constantFrom(...PROTOCOLS),
  version: fc.constantFrom(...VERSIONS),
  ready: fc.boolean(),
});

const routeArb = fc.record({
  from: fc.constantFrom('*', ...SERVICES),
  to: fc.constantFrom('*', ...SERVICES, 'httpbin'),
  split: fc.array(fc.record({ weight: fc.integer({ min: 0, max: 100 }), version: fc.option(fc.constantFrom(...VERSIONS), { nil: undefined }) }), { minLength: 1, maxLength: 3 }),
  withHttpRoute: fc.boolean(),
});

/** A MeshHTTPRoute or MeshTCPRoute rule for a destination: its backends, and a mirror. */
const targetRefRouteArb = fc.record({
  kind: fc.constantFrom('MeshHTTPRoute', 'MeshTCPRoute'),
  to: fc.constantFrom(...SERVICES, 'httpbin'),
  backends: fc.array(fc.record({ service: fc.constantFrom(...SERVICES, 'httpbin'), version: fc.option(fc.constantFrom(...VERSIONS), { nil: undefined }), weight: fc.integer({ min: 0, max: 100 }) }), { minLength: 1, maxLength: 3 }),
  mirror: fc.option(fc.constantFrom(...SERVICES), { nil: undefined }),
});

const meshArb = fc.record({
  instances: fc.array(instanceArb, { minLength: 1, maxLength: 8 }),
  outbounds: fc.uniqueArray(fc.constantFrom(...SERVICES, 'httpbin', 'nowhere'), { minLength: 1, maxLength: 5 }),
  routes: fc.array(routeArb, { maxLength: 4 }),
  mtls: fc.constantFrom('off', 'STRICT', 'PERMISSIVE'),
  zoneEgress: fc.boolean(),
  transparent: fc.boolean(),
  withPolicies: fc.boolean(),
  targetRefRoutes: fc.array(targetRefRouteArb, { maxLength: 3 }),
  withTargetRefObservability: fc.boolean(),
});

type MeshCase = typeof meshArb extends fc.Arbitrary<infer T> ? T : never;

const ANY = { match: { 'mesh.io/service': '*' } };
const svc = (name: string) => ({ match: { 'mesh.io/service': name } });

function render(meshCase: MeshCase): ProxyConfig {
  const instances = meshCase.instances.map((instance, index) =>
    dataplane(`dp-${index}`, {
      address: `10.0.0.${index + 10}`,
      inbound: [
        {
          port: 8000 + index,
          ...(instance.ready ? {} : { health: { ready: false } }),
          tags: { 'mesh.io/service': instance.service, version: instance.version, ...(instance.protocol ? { 'mesh.io/protocol': instance.protocol } : {}) },
        },
      ],
    }),
  );
  const client = dataplane('client', {
    address: '10.0.0.1',
    inbound: [{ port: 7000, tags: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' } }],
    outbound: meshCase.outbounds.map((service, index) => ({ port: 20000 + index, tags: { 'mesh.io/service': service } })),
    ...(meshCase.transparent ? { transparentProxying: { redirectPortInbound: 15006, redirectPortOutbound: 15001 } } : {}),
  });
  const withMtls = meshCase.mtls !== 'off';
  const spec = meshSpec({
    ...(withMtls ? { mtls: { enabledBackend: 'ca', backends: [{ name: 'ca', type: 'builtin', ...(meshCase.mtls === 'PERMISSIVE' ? { mode: 'PERMISSIVE' } : {}) }] } } : {}),
    ...(withMtls && meshCase.zoneEgress ? { routing: { zoneEgress: true } } : {}),
    logging: { defaultBackend: 'file', backends: [{ name: 'file', type: 'file', conf: { path: '/tmp/access.log' } }] },
    tracing: { defaultBackend: 'dd', backends: [{ name: 'dd', type: 'datadog', conf: { address: '10.9.9.9', port: 8126, splitService: true } }] },
  });
  const routes = meshCase.routes.map((route, index) => {
    const split = route.split.map(({ weight, version }) => ({ weight, destination: { 'mesh.io/service': route.to, ...(version ? { version } : {}) } }));
    if (split.every((entry) => entry.weight === 0) && split[0]) split[0].weight = 1;
    const http = route.withHttpRoute ? [{ match: { path: { prefix: '/special' } }, destination: { 'mesh.io/service': route.to } }] : undefined;
    return policy('TrafficRoute', `route-${index}`, { sources: [svc(route.from)], destinations: [svc(route.to)], conf: { split, ...(http ? { http } : {}) } });
  });
  const policies = meshCase.withPolicies
    ? {
        HealthCheck: [policy('HealthCheck', 'hc', { sources: [ANY], destinations: [ANY], conf: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 } })],
        CircuitBreaker: [policy('CircuitBreaker', 'cb', { sources: [ANY], destinations: [ANY], conf: { thresholds: { maxConnections: 10 } } })],
        Retry: [policy('Retry', 'retry', { sources: [ANY], destinations: [ANY], conf: { http: { numRetries: 2 }, grpc: { numRetries: 2 }, tcp: { maxConnectAttempts: 3 } } })],
        Timeout: [policy('Timeout', 'timeout', { sources: [ANY], destinations: [ANY], conf: { connectTimeout: '3s', http: { requestTimeout: '5s' } } })],
        TrafficLog: [policy('TrafficLog', 'log', { sources: [ANY], destinations: [ANY] })],
        TrafficTrace: [policy('TrafficTrace', 'trace', { selectors: [ANY] })],
        TrafficPermission: [policy('TrafficPermission', 'allow', { sources: [ANY], destinations: [ANY] })],
        RateLimit: [policy('RateLimit', 'rl', { sources: [ANY], destinations: [ANY], conf: { http: { requests: 5, interval: '1s' } } })],
        FaultInjection: [policy('FaultInjection', 'fi', { sources: [ANY], destinations: [{ match: { 'mesh.io/service': 'web', 'mesh.io/protocol': 'http' } }], conf: { abort: { percentage: 1, httpStatus: 500 } } })],
      }
    : {};
  const context = meshContextOf({
    meshSpec: spec,
    dataplanes: [client, ...instances],
    externalServices: [externalService('httpbin', { networking: { address: 'httpbin.org:443', tls: { enabled: true } }, tags: { 'mesh.io/service': 'httpbin', 'mesh.io/protocol': 'http' } })],
    policies: { TrafficRoute: routes, ...policies },
    extra: { zoneEgresses: [{ name: 'egress', spec: { zone: undefined, networking: { address: '10.0.9.1', port: 10002, admin: undefined } } }] },
  });
  const backendRefsOf = (route: MeshCase['targetRefRoutes'][number]) =>
    route.backends.map(({ service, version, weight }) => (version ? { kind: 'MeshServiceSubset', name: service, tags: { version }, weight } : { kind: 'MeshService', name: service, weight }));
  const destination = (route: MeshCase['targetRefRoutes'][number]) => ({ kind: 'MeshService', name: route.to });
  const httpRoutes = meshCase.targetRefRoutes.flatMap((route, index) => {
    if (route.kind !== 'MeshHTTPRoute') return [];
    const filters = route.mirror ? [{ type: 'RequestMirror', requestMirror: { backendRef: { kind: 'MeshService', name: route.mirror } } }] : [];
    const rule = { matches: [{ path: { type: 'PathPrefix', value: '/api' } }], default: { backendRefs: backendRefsOf(route), filters } };
    return [targetRefPolicy('MeshHTTPRoute', `mhr-${index}`, { targetRef: { kind: 'Mesh' }, to: [{ targetRef: destination(route), rules: [rule] }] })];
  });
  const tcpRoutes = meshCase.targetRefRoutes.flatMap((route, index) =>
    route.kind === 'MeshTCPRoute' ? [targetRefPolicy('MeshTCPRoute', `mtr-${index}`, { targetRef: { kind: 'Mesh' }, to: [{ targetRef: destination(route), rules: [{ default: { backendRefs: backendRefsOf(route) } }] }] })] : [],
  );
  const observability = meshCase.withTargetRefObservability
    ? {
        MeshAccessLog: [targetRefPolicy('MeshAccessLog', 'logs', { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { backends: [{ type: 'OpenTelemetry', openTelemetry: { endpoint: 'otel:4317' } }] } }] })],
        MeshTrace: [targetRefPolicy('MeshTrace', 'trace', { targetRef: { kind: 'Mesh' }, default: { backends: [{ type: 'OpenTelemetry', openTelemetry: { endpoint: 'otel:4317' } }] } })],
      }
    : {};
  const targetRef = targetRefMatchOf(context, client, { MeshHTTPRoute: httpRoutes, MeshTCPRoute: tcpRoutes, ...observability });
  return renderProxyConfig({ context, dataplane: client, targetRef });
}

/** Cluster names a resource refers to: route and TCP proxy targets, weighted clusters, tracing collectors. */
function referencedClusters(value: JsonValue | undefined, found: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const item of value) referencedClusters(item, found);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if ((key === 'cluster' || key === 'collectorCluster') && typeof item === 'string') found.add(item);
      else if (key === 'envoyGrpc' && item && typeof item === 'object' && !Array.isArray(item) && typeof item.clusterName === 'string') found.add(item.clusterName);
      else if (key === 'weightedClusters' && item && typeof item === 'object' && !Array.isArray(item)) {
        for (const weighted of (item.clusters as Array<{ name: string }> | undefined) ?? []) found.add(weighted.name);
      } else referencedClusters(item, found);
    }
  }
  return found;
}

const settings = { numRuns: 60, seed: 4242 };

describe('rendered configurations are self-consistent', () => {
  it('every cluster a listener or route names exists', () => {
    fc.assert(
      fc.property(meshArb, (meshCase) => {
        const config = render(meshCase);
        const clusters = new Set(config.clusters.map((cluster) => cluster.name));
        const referenced = referencedClusters(config.listeners as unknown as JsonValue, new Set());
        expect([...referenced].filter((name) => !clusters.has(name))).toEqual([]);
      }),
      settings,
    );
  });

  it('every endpoint set belongs to an EDS cluster, and every EDS cluster has one', () => {
    fc.assert(
      fc.property(meshArb, (meshCase) => {
        const config = render(meshCase);
        const edsClusters = config.clusters.filter((cluster) => cluster.type === 'EDS').map((cluster) => cluster.name);
        expect(config.endpoints.map((assignment) => assignment.clusterName)).toEqual([...edsClusters].sort());
      }),
      settings,
    );
  });

  it('Envoy accepts every resource', () => {
    fc.assert(
      fc.property(meshArb, (meshCase) => {
        const config = render(meshCase);
        const resources: TypedObject[] = [...config.listeners, ...config.clusters, ...config.endpoints];
        expect(resources.flatMap((resource) => envoySchemaErrors(resource))).toEqual([]);
      }),
      { ...settings, numRuns: 30 },
    );
  });
});
