// Inspection of the targetRef policies over HTTP: `/rules` checked against golden files in
// testdata/ (`UPDATE_GOLDEN=1` rewrites them after a deliberate change; review the diff), the
// proxy-wide attachment of `/policies`, and `/{policy-path}/{name}/dataplanes`.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyMesh, expectJson, startApi, stdError, type TestApi } from '../testing.js';

const testdata = (file: string): URL => new URL(`./testdata/${file}`, import.meta.url);

function expectGolden(file: string, actual: unknown): void {
  const json = `${JSON.stringify(actual, null, 1)}\n`;
  if (process.env.UPDATE_GOLDEN) writeFileSync(testdata(file), json);
  expect(JSON.parse(json)).toEqual(JSON.parse(readFileSync(testdata(file), 'utf8')));
}

const SERVICE = 'mesh.io/service';
const MESH = { kind: 'Mesh' };
const service = (name: string) => ({ kind: 'MeshService', name });

let api: TestApi;

/**
 * Mesh `demo` without default policies: web-1 (web v1) calls backend (all, and v2 alone) and db;
 * backend-1 and backend-2 serve backend v1 and v2, backend-2 calls db; edge-gw is a builtin gateway. Policies of
 * several kinds overlap on them: for the whole mesh, for a service, a subset, a gateway, a route.
 */
async function overlappingPolicies(api: TestApi): Promise<void> {
  const put = async (path: string, body: object) => {
    const reply = await api.put(`/meshes/demo/${path}`, body);
    expect(reply.status, `${path}: ${reply.text}`).toBe(201);
  };
  const dataplane = (name: string, networking: object) => put(`dataplanes/${name}`, { type: 'Dataplane', mesh: 'demo', name, networking });
  const policy = (type: string, path: string, name: string, spec: object) => put(`${path}/${name}`, { type, mesh: 'demo', name, spec });
  expect((await api.put('/meshes/demo', emptyMesh('demo'))).status).toBe(201);
  await dataplane('web-1', {
    address: '10.0.0.1',
    inbound: [{ port: 8080, tags: { [SERVICE]: 'web', 'mesh.io/protocol': 'http', version: 'v1' } }],
    outbound: [
      { port: 10001, tags: { [SERVICE]: 'backend' } },
      { port: 10002, tags: { [SERVICE]: 'backend', version: 'v2' } },
      { port: 10003, tags: { [SERVICE]: 'db' } },
    ],
  });
  await dataplane('backend-1', { address: '10.0.0.2', inbound: [{ port: 9090, tags: { [SERVICE]: 'backend', 'mesh.io/protocol': 'http', version: 'v1' } }] });
  await dataplane('backend-2', {
    address: '10.0.0.3',
    inbound: [{ port: 9090, tags: { [SERVICE]: 'backend', 'mesh.io/protocol': 'http', version: 'v2' } }],
    outbound: [{ port: 10003, tags: { [SERVICE]: 'db' } }],
  });
  await dataplane('edge-gw', { address: '10.0.0.4', gateway: { type: 'BUILTIN', tags: { [SERVICE]: 'edge' } } });
  await put('meshgateways/edge', {
    type: 'MeshGateway',
    mesh: 'demo',
    name: 'edge',
    selectors: [{ match: { [SERVICE]: 'edge' } }],
    conf: { listeners: [{ port: 80, protocol: 'HTTP', tags: { listener: 'public' } }] },
  });

  await policy('MeshTimeout', 'meshtimeouts', 'timeout-all', {
    targetRef: MESH,
    to: [{ targetRef: MESH, default: { connectionTimeout: '5s', http: { requestTimeout: '15s' } } }],
    from: [{ targetRef: MESH, default: { idleTimeout: '1h' } }],
  });
  await policy('MeshTimeout', 'meshtimeouts', 'web-to-backend', { targetRef: service('web'), to: [{ targetRef: service('backend'), default: { http: { requestTimeout: '2s' } } }] });
  await policy('MeshHTTPRoute', 'meshhttproutes', 'web-route', {
    targetRef: service('web'),
    to: [
      {
        targetRef: service('backend'),
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
  });
  await policy('MeshTimeout', 'meshtimeouts', 'api-timeout', { targetRef: { kind: 'MeshHTTPRoute', name: 'web-route' }, to: [{ targetRef: MESH, default: { http: { requestTimeout: '1s' } } }] });
  await policy('MeshTrafficPermission', 'meshtrafficpermissions', 'deny-all', { targetRef: MESH, from: [{ targetRef: MESH, default: { action: 'Deny' } }] });
  await policy('MeshTrafficPermission', 'meshtrafficpermissions', 'backend-clients', {
    targetRef: service('backend'),
    from: [
      { targetRef: service('web'), default: { action: 'Allow' } },
      { targetRef: { kind: 'MeshSubset', tags: { version: 'v2' } }, default: { action: 'AllowWithShadowDeny' } },
    ],
  });
  await policy('MeshTrace', 'meshtraces', 'trace-all', {
    targetRef: MESH,
    default: { sampling: { overall: 100, random: 50 }, backends: [{ type: 'Zipkin', zipkin: { url: 'http://zipkin.local:9411/api/v2/spans' } }] },
  });
  await policy('MeshTrace', 'meshtraces', 'trace-web', { targetRef: service('web'), default: { sampling: { overall: 10 }, backends: [{ type: 'Datadog', datadog: { url: 'http://datadog.local:8126' } }] } });
  await policy('MeshAccessLog', 'meshaccesslogs', 'edge-logs', {
    targetRef: { kind: 'MeshGateway', name: 'edge', tags: { listener: 'public' } },
    from: [{ targetRef: MESH, default: { backends: [{ type: 'File', file: { path: '/tmp/edge.log' } }] } }],
  });
  const patch = (cluster: string) => ({ cluster: { match: { name: cluster }, operation: 'Patch', value: 'connectTimeout: 3s' } });
  await policy('MeshProxyPatch', 'meshproxypatches', 'patch-all', { targetRef: MESH, default: { appendModifications: [patch('db')] } });
  await policy('MeshProxyPatch', 'meshproxypatches', 'patch-web', { targetRef: service('web'), default: { appendModifications: [patch('backend')] } });
  await policy('MeshRetry', 'meshretries', 'retry-backend', { targetRef: MESH, to: [{ targetRef: service('backend'), default: { http: { numRetries: 3 } } }] });
}

beforeAll(async () => {
  api = await startApi();
  await overlappingPolicies(api);
}, 60_000);

afterAll(async () => {
  await api?.close();
});

/** A policy exactly as `GET` of it returns it. */
async function entity(path: string): Promise<unknown> {
  const reply = await api.get(`/meshes/demo/${path}`);
  expect(reply.status).toBe(200);
  return reply.body;
}

describe('GET /meshes/{mesh}/dataplanes/{name}/rules', () => {
  it.each(['web-1', 'backend-2', 'edge-gw'])('gives the merged rules of %s', async (name) => {
    const reply = await api.get(`/meshes/demo/dataplanes/${name}/rules`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body.total).toBe(reply.body.items.length);
    expectGolden(`rules-${name}.golden.json`, reply.body);
  });

  it('answers 404 for an unknown mesh or dataplane', async () => {
    expectJson(await api.get('/meshes/nope/dataplanes/web-1/rules'), 404, stdError(404, 'Could not build MeshContext', 'Not found'));
    expectJson(await api.get('/meshes/demo/dataplanes/nope/rules'), 404, stdError(404, 'Could not get MatchedPolicies', 'Not found'));
  });
});

describe('GET /meshes/{mesh}/dataplanes/{name}/policies', () => {
  it('lists the targetRef policies selecting a sidecar on the proxy as a whole, least specific first', async () => {
    expectJson(await api.get('/meshes/demo/dataplanes/backend-2/policies'), 200, {
      kind: 'SidecarDataplane',
      total: 1,
      items: [
        {
          type: 'dataplane',
          matchedPolicies: {
            MeshProxyPatch: [await entity('meshproxypatches/patch-all')],
            MeshRetry: [await entity('meshretries/retry-backend')],
            MeshTimeout: [await entity('meshtimeouts/timeout-all')],
            MeshTrace: [await entity('meshtraces/trace-all')],
            MeshTrafficPermission: [await entity('meshtrafficpermissions/deny-all'), await entity('meshtrafficpermissions/backend-clients')],
          },
        },
      ],
    });
    const web = await api.get('/meshes/demo/dataplanes/web-1/policies');
    expect(web.body.items[0].matchedPolicies.MeshTimeout).toEqual([
      await entity('meshtimeouts/timeout-all'),
      await entity('meshtimeouts/web-to-backend'),
      await entity('meshtimeouts/api-timeout'),
    ]);
  });
});

describe('GET /meshes/{mesh}/{targetRef policy path}/{name}/dataplanes', () => {
  it('lists the proxies a policy selects by name: sidecars as a whole, builtin gateways with their gateway', async () => {
    const sidecar = (name: string) => ({ kind: 'SidecarDataplane', dataplane: { mesh: 'demo', name }, attachments: [{ type: 'dataplane' }] });
    const gateway = { kind: 'MeshGatewayDataplane', dataplane: { mesh: 'demo', name: 'edge-gw' }, gateway: { mesh: 'demo', name: 'edge' } };
    expectJson(await api.get('/meshes/demo/meshtimeouts/timeout-all/dataplanes'), 200, { total: 4, items: [sidecar('backend-1'), sidecar('backend-2'), gateway, sidecar('web-1')] });
    expectJson(await api.get('/meshes/demo/meshtimeouts/api-timeout/dataplanes'), 200, { total: 1, items: [sidecar('web-1')] });
    expectJson(await api.get('/meshes/demo/meshaccesslogs/edge-logs/dataplanes'), 200, { total: 1, items: [gateway] });
    expectJson(await api.get('/meshes/demo/meshtrafficpermissions/backend-clients/dataplanes'), 200, { total: 2, items: [sidecar('backend-1'), sidecar('backend-2')] });
  });

  it('gives no items for an unknown policy and 404 for an unknown mesh', async () => {
    expectJson(await api.get('/meshes/demo/meshtimeouts/nope/dataplanes'), 200, { total: 0, items: [] });
    expectJson(await api.get('/meshes/nope/meshretries/x/dataplanes'), 404, stdError(404, 'Could not list Dataplanes', 'Not found'));
  });
});

describe('GET /meshes/{mesh}/{targetRef policy path}/{name}/_resources/dataplanes', () => {
  it('pages the proxies a policy selects, through a route or a gateway too', async () => {
    const dataplane = (name: string) => ({ type: 'Dataplane', mesh: 'demo', name });
    expectJson(await api.get('/meshes/demo/meshtimeouts/api-timeout/_resources/dataplanes'), 200, { total: 1, items: [dataplane('web-1')] });
    expectJson(await api.get('/meshes/demo/meshaccesslogs/edge-logs/_resources/dataplanes'), 200, { total: 1, items: [dataplane('edge-gw')] });
    const page = await api.get('/meshes/demo/meshtrafficpermissions/deny-all/_resources/dataplanes?size=2&name=-');
    expect(page.body).toMatchObject({ total: 4, items: [dataplane('backend-1'), dataplane('backend-2')] });
    // The next page resumes after this one's last item (docs/api.md, Lists).
    expect(page.body.next).toContain(`offset=~${Buffer.from('demo\u0000backend-2').toString('base64url')}`);
  });

  it('answers 404 for an unknown policy', async () => {
    expectJson(await api.get('/meshes/demo/meshtimeouts/nope/_resources/dataplanes'), 404, stdError(404, 'Could not retrieve policy', 'Not found'));
  });

  it('answers the same at `-resources/dataplanes`, the path the reference command-line client asks', async () => {
    for (const path of ['/meshes/demo/meshtimeouts/api-timeout', '/meshes/demo/meshaccesslogs/edge-logs', '/meshes/demo/meshtimeouts/nope']) {
      const underscore = await api.get(`${path}/_resources/dataplanes`);
      expectJson(await api.get(`${path}/-resources/dataplanes`), underscore.status, underscore.body);
    }
  });
});
