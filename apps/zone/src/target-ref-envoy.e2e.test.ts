// The targetRef policies through real proxies: the zone binary, `mesh-dp` and Envoy. A
// MeshHTTPRoute splits web's traffic between backend v1 and v2 and routes by header; under mesh
// mTLS a MeshTrafficPermission lets web in and keeps another client out; a policy of every
// targetRef kind at once is applied by Envoy with no update rejected, and a ProxyTemplate adds a
// listener and its route configuration beside them (docs/policies.md).
import type { Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_DATAPLANE, callThroughTimes, clientDataplane, type DataplaneProcess, eventually, requireEnvoy, startApp, startMeshDataplane } from './testing/envoy.js';
import { freePort, startControlPlane } from './testing/process.js';

const envoy = requireEnvoy('target-ref-envoy.e2e');

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let cp: Instance;
const apps: Server[] = [];
const proxies = new Map<string, DataplaneProcess>();
/** The port of each client's outbound to backend. */
const outboundPorts = new Map<string, number>();
const logDir = mkdtempSync(join(tmpdir(), 'mesh-target-ref-logs-'));

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${cp.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
};

/** Writes a targetRef policy (body under `spec`), created or updated. */
async function putPolicy(path: string, name: string, spec: object): Promise<void> {
  const type = { meshhttproutes: 'MeshHTTPRoute', meshtrafficpermissions: 'MeshTrafficPermission' }[path] ?? '';
  const res = await api('PUT', `/meshes/default/${path}/${name}`, { type, mesh: 'default', name, spec });
  expect([200, 201], res.text).toContain(res.status);
}

/** Requests from a client to backend through its outbound: the answering apps' names, or the failures. */
const calls = (client: string, times: number, headers: Record<string, string> = {}) => callThroughTimes(outboundPorts.get(client)!, times, headers);

async function startProxy(template: string, vars: Record<string, string>): Promise<void> {
  proxies.set(vars.name!, await startMeshDataplane(cp, envoy!, template, vars));
}

async function startBackend(version: string): Promise<void> {
  const app = await startApp(`backend ${version}`);
  apps.push(app.server);
  await startProxy(BACKEND_DATAPLANE, { name: `backend-${version}`, port: String(await freePort()), appPort: String(app.port), version });
}

async function startClient(service: string): Promise<void> {
  const app = await startApp(service);
  apps.push(app.server);
  const outboundPort = await freePort();
  outboundPorts.set(service, outboundPort);
  const vars = { name: `${service}-1`, service, port: String(await freePort()), appPort: String(app.port), outboundPort: String(outboundPort), dbPort: String(await freePort()) };
  await startProxy(clientDataplane('{{ service }}', { backend: 'outboundPort', db: 'dbPort' }), vars);
}

const adminGet = async (name: string, path: string) => (await fetch(`http://127.0.0.1:${proxies.get(name)!.adminPort}${path}`)).text();

/** Every update Envoy rejected so far, as `stat: count`. */
async function rejectedUpdates(name: string): Promise<string[]> {
  const stats = await adminGet(name, '/stats?filter=update_rejected');
  return [...stats.matchAll(/^(\S+update_rejected): (\d+)$/gm)].filter((match) => match[2] !== '0').map((match) => `${match[1]}: ${match[2]}`);
}

beforeAll(async () => {
  if (!envoy) return;
  cp = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(await freePort()), MESH_XDS_SERVER_DATAPLANE_STATUS_FLUSH_INTERVAL: '1s' } });
  await startBackend('v1');
  await startBackend('v2');
  await startClient('web');
  await startClient('intruder');
  for (const client of ['web', 'intruder']) {
    await eventually(() => calls(client, 4), (answers) => answers.every((answer) => answer.startsWith('backend ')), `${client} to reach backend`, 60_000);
  }
}, 180_000);

afterAll(async () => {
  await Promise.all([...proxies.values()].map((proxy) => proxy.stop()));
  for (const app of apps) app.close();
  await cp?.stop();
});

const backendRef = (version: string, weight: number) => ({ kind: 'MeshServiceSubset', name: 'backend', tags: { version }, weight });

const webRoute = (split: Array<[string, number]>) => ({
  targetRef: { kind: 'MeshService', name: 'web' },
  to: [
    {
      targetRef: { kind: 'MeshService', name: 'backend' },
      rules: [
        { matches: [{ path: { type: 'PathPrefix', value: '/' }, headers: [{ name: 'x-version', value: 'v2' }] }], default: { backendRefs: [backendRef('v2', 1)] } },
        { matches: [{ path: { type: 'PathPrefix', value: '/' } }], default: { backendRefs: split.map(([version, weight]) => backendRef(version, weight)) } },
      ],
    },
  ],
});

describe.skipIf(!envoy)('targetRef policies on real Envoy proxies', () => {
  it('splits traffic between backend versions as a MeshHTTPRoute says, and routes by header', async () => {
    await putPolicy('meshhttproutes', 'web-to-backend', webRoute([['v1', 100], ['v2', 0]]));
    await eventually(() => calls('web', 8), (answers) => answers.every((answer) => answer === 'backend v1'), 'all of web on v1');
    // The header rule sends to v2 whatever the split.
    expect(await calls('web', 4, { 'x-version': 'v2' })).toEqual(['backend v2', 'backend v2', 'backend v2', 'backend v2']);
    // A route of web only: the other client keeps reaching both versions.
    await eventually(() => calls('intruder', 20), (answers) => new Set(answers).size === 2, 'intruder on both versions');

    await putPolicy('meshhttproutes', 'web-to-backend', webRoute([['v1', 50], ['v2', 50]]));
    // Requests in flight while Envoy swaps listeners may fail: only a clean round counts.
    await eventually(() => calls('web', 40), (answers) => answers.every((answer) => answer.startsWith('backend ')) && new Set(answers).size === 2, 'web on both versions');

    await putPolicy('meshhttproutes', 'web-to-backend', webRoute([['v1', 0], ['v2', 100]]));
    await eventually(() => calls('web', 8), (answers) => answers.every((answer) => answer === 'backend v2'), 'all of web on v2');
    for (const name of proxies.keys()) expect(await rejectedUpdates(name), name).toEqual([]);
  }, 120_000);

  it('lets web in and keeps intruder out under mesh mTLS, as a MeshTrafficPermission says', async () => {
    const mesh = (await api('GET', '/meshes/default')).json;
    expect((await api('PUT', '/meshes/default', { ...mesh, mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } })).status).toBe(200);
    for (const name of proxies.keys()) {
      await eventually(() => adminGet(name, '/config_dump?resource=dynamic_active_secrets'), (text) => text.includes('identity_cert:secret:default'), `${name} to hold its certificate`);
    }
    // Encrypted, and allowed by the default TrafficPermission.
    await eventually(() => calls('intruder', 4), (answers) => answers.every((answer) => answer.startsWith('backend ')), 'intruder over mTLS');

    await putPolicy('meshtrafficpermissions', 'backend-clients', {
      targetRef: { kind: 'MeshService', name: 'backend' },
      from: [
        { targetRef: { kind: 'Mesh' }, default: { action: 'Allow' } },
        { targetRef: { kind: 'MeshService', name: 'intruder' }, default: { action: 'Deny' } },
      ],
    });
    const denied = await eventually(() => calls('intruder', 4), (answers) => answers.every((answer) => !answer.startsWith('backend ')), 'intruder to be denied');
    expect(denied.join()).not.toContain('backend');
    expect(await calls('web', 4)).toEqual(['backend v2', 'backend v2', 'backend v2', 'backend v2']);
    const stats = (await adminGet('backend-v1', '/stats?filter=rbac')) + (await adminGet('backend-v2', '/stats?filter=rbac'));
    expect(stats).toMatch(/rbac\.denied: [1-9]/);
    for (const name of proxies.keys()) expect(await rejectedUpdates(name), name).toEqual([]);
  }, 120_000);

  it('applies a policy of every targetRef kind at once, with no update rejected', async () => {
    const mesh = { kind: 'Mesh' };
    const web = { kind: 'MeshService', name: 'web' };
    const policies: Array<[string, string, string, object]> = [
      ['MeshAccessLog', 'meshaccesslogs', 'logs', { targetRef: mesh, from: [{ targetRef: mesh, default: { backends: [{ type: 'File', file: { path: join(logDir, 'in.log') } }] } }], to: [{ targetRef: mesh, default: { backends: [{ type: 'File', file: { path: join(logDir, 'out.log'), format: { type: 'Json', json: [{ key: 'to', value: '%KUMA_DESTINATION_SERVICE%' }] } } }, { type: 'OpenTelemetry', openTelemetry: { endpoint: '127.0.0.1:4317' } }] } }] }],
      ['MeshCircuitBreaker', 'meshcircuitbreakers', 'breaker', { targetRef: mesh, to: [{ targetRef: mesh, default: { connectionLimits: { maxConnections: 1000 }, outlierDetection: { detectors: { totalFailures: { consecutive: 50 } } } } }] }],
      ['MeshFaultInjection', 'meshfaultinjections', 'faults', { targetRef: mesh, from: [{ targetRef: { kind: 'MeshService', name: 'chaos' }, default: { http: [{ abort: { httpStatus: 500, percentage: 100 } }] } }] }],
      ['MeshHealthCheck', 'meshhealthchecks', 'checks', { targetRef: web, to: [{ targetRef: mesh, default: { interval: '10s', http: { path: '/' }, tcp: {} } }] }],
      ['MeshLoadBalancingStrategy', 'meshloadbalancingstrategies', 'balancing', { targetRef: web, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { loadBalancer: { type: 'RingHash', ringHash: { hashPolicies: [{ type: 'Header', header: { name: 'x-user' } }] } }, localityAwareness: { localZone: { affinityTags: [{ key: 'version' }] } } } }] }],
      ['MeshProxyPatch', 'meshproxypatches', 'patch', { targetRef: mesh, default: { appendModifications: [{ cluster: { match: { origin: 'outbound' }, operation: 'Patch', value: 'perConnectionBufferLimitBytes: 65536' } }, { httpFilter: { match: { name: 'envoy.filters.http.router', origin: 'inbound' }, operation: 'Patch', jsonPatches: [{ op: 'add', path: '/suppressEnvoyHeaders', value: true }] } }] } }],
      ['MeshRateLimit', 'meshratelimits', 'limits', { targetRef: mesh, from: [{ targetRef: mesh, default: { local: { http: { requestRate: { num: 1000, interval: '1s' } }, tcp: { connectionRate: { num: 1000, interval: '1s' } } } } }] }],
      ['MeshRetry', 'meshretries', 'retries', { targetRef: mesh, to: [{ targetRef: mesh, default: { http: { numRetries: 2, retryOn: ['5xx', '503'] }, tcp: { maxConnectAttempt: 2 } } }] }],
      ['MeshTCPRoute', 'meshtcproutes', 'db', { targetRef: web, to: [{ targetRef: { kind: 'MeshService', name: 'db' } }] }],
      ['MeshTimeout', 'meshtimeouts', 'timeouts', { targetRef: mesh, from: [{ targetRef: mesh, default: { idleTimeout: '1h' } }], to: [{ targetRef: mesh, default: { connectionTimeout: '2s', http: { requestTimeout: '10s' } } }] }],
      ['MeshTrace', 'meshtraces', 'trace', { targetRef: mesh, default: { backends: [{ type: 'Zipkin', zipkin: { url: 'http://127.0.0.1:9411/api/v2/spans' } }], sampling: { overall: 100 } } }],
    ];
    for (const [type, path, name, spec] of policies) {
      const res = await api('PUT', `/meshes/default/${path}/${name}`, { type, mesh: 'default', name, spec });
      expect([200, 201], `${type}: ${res.text}`).toContain(res.status);
    }
    // What Envoy holds once it applied web's configuration: a mark of each kind (MeshHTTPRoute from
    // the first test; MeshTrafficPermission, of the second, is backend's).
    const marks = [
      'meshaccesslog:opentelemetry:0', // MeshAccessLog
      '"consecutive_5xx": 50', // MeshCircuitBreaker
      'envoy.filters.http.fault', // MeshFaultInjection
      'health_checks', // MeshHealthCheck
      'x-version', // MeshHTTPRoute
      'x-user', // MeshLoadBalancingStrategy
      'per_connection_buffer_limit_bytes', // MeshProxyPatch
      'tcp_rate_limit', // MeshRateLimit
      'retriable_status_codes', // MeshRetry
      '"connect_timeout": "2s"', // MeshTimeout
      'meshtrace:zipkin', // MeshTrace
    ];
    const missing = await eventually(
      async () => {
        const dump = await adminGet('web-1', '/config_dump');
        // MeshTCPRoute: the db outbound proxies TCP to db's cluster, which the route made.
        return [...marks.filter((mark) => !dump.includes(mark)), ...(/"stat_prefix": "db",\s+"cluster": "db"/.test(dump) ? [] : ['db TCP proxy'])];
      },
      (left) => left.length === 0,
      'web to apply every policy',
      60_000,
    );
    expect(missing).toEqual([]);
    await eventually(() => calls('web', 4), (answers) => answers.every((answer) => answer === 'backend v2'), 'web to still reach backend');
    await eventually(
      () => adminGet('backend-v2', '/config_dump'),
      (text) => ['tcp_rate_limit', 'suppress_envoy_headers', 'MeshTrafficPermission', '"idle_timeout": "3600s"'].every((mark) => text.includes(mark)),
      'backend to apply its inbound policies',
    );
    for (const name of proxies.keys()) expect(await rejectedUpdates(name), name).toEqual([]);
  }, 150_000);

  it('serves the raw listener and route configuration of a ProxyTemplate, and applies its modifications last', async () => {
    const port = await freePort();
    const listener = `'@type': type.googleapis.com/envoy.config.listener.v3.Listener
name: template-status
address: { socket_address: { address: 127.0.0.1, port_value: ${port} } }
filter_chains:
- filters:
  - name: envoy.filters.network.http_connection_manager
    typed_config:
      '@type': type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
      stat_prefix: template_status
      rds: { route_config_name: template-status, config_source: { ads: {}, resource_api_version: V3 } }
      http_filters:
      - name: envoy.filters.http.router
        typed_config: { '@type': type.googleapis.com/envoy.extensions.filters.http.router.v3.Router }
`;
    const routes = `'@type': type.googleapis.com/envoy.config.route.v3.RouteConfiguration
name: template-status
virtual_hosts:
- name: status
  domains: ['*']
  routes:
  - match: { prefix: / }
    direct_response: { status: 200, body: { inline_string: from the template } }
`;
    const template = {
      type: 'ProxyTemplate',
      mesh: 'default',
      name: 'web-template',
      selectors: [{ match: { 'mesh.io/service': 'web' } }],
      conf: {
        imports: ['default-proxy'],
        resources: [
          { name: 'template-status', version: 'v1', resource: listener },
          { name: 'template-status', version: 'v1', resource: routes },
        ],
        // The MeshProxyPatch of the previous test set 65536 on the outbound clusters: the template's modification comes after it.
        modifications: [{ cluster: { match: { origin: 'outbound' }, operation: 'patch', value: 'perConnectionBufferLimitBytes: 32768' } }],
      },
    };
    const res = await api('PUT', '/meshes/default/proxytemplates/web-template', template);
    expect([200, 201], res.text).toContain(res.status);
    const answer = await eventually(
      () => fetch(`http://127.0.0.1:${port}/`).then((reply) => reply.text(), (error: Error) => error.message),
      (text) => text === 'from the template',
      'web to serve the template listener',
      60_000,
    );
    expect(answer).toBe('from the template');
    await eventually(() => adminGet('web-1', '/config_dump'), (text) => text.includes('"per_connection_buffer_limit_bytes": 32768'), 'the template modification after the MeshProxyPatch');
    await eventually(() => calls('web', 4), (answers) => answers.every((answer) => answer === 'backend v2'), 'web to still reach backend');
    for (const name of proxies.keys()) expect(await rejectedUpdates(name), name).toEqual([]);
  }, 120_000);
});
