import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiApp } from './api.js';
import type { ApiContext } from './context.js';
import { sendJson } from './errors.js';
import { guardConnections } from './limits.js';
import type { RouteTable } from './route-table.js';
import { dataplane, startApi, stdError, type TestApi } from './testing.js';

/** The API of `api`'s context on a server of its own, with a request log that numbers requests and a metrics observer. */
async function serve(ctx: ApiContext, extendRoutes?: (table: RouteTable) => void) {
  let requests = 0;
  const observed: string[] = [];
  const logged: string[] = [];
  const app = createApiApp(
    {
      ...ctx,
      requestLogger: (req, res) => {
        res.setHeader('x-request-id', String(++requests));
        res.on('close', () => logged.push(`${req.method} ${req.url} ${res.statusCode}`));
      },
      observeRequest: ({ route, method, status }) => observed.push(`${method} ${route} ${status}`),
    },
    extendRoutes,
  );
  const server = createServer(app.serverOptions, app);
  guardConnections(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    observed,
    logged,
    /** The answer's bytes as sent, its `Date` and request id aside. */
    async raw(method: string, path: string, headers: Record<string, string> = {}): Promise<string> {
      const head = [`${method} ${path} HTTP/1.1`, ...Object.entries({ Host: `127.0.0.1:${port}`, ...headers }).map(([k, v]) => `${k}: ${v}`), 'Connection: close', '', ''].join('\r\n');
      const socket = connect(port, '127.0.0.1');
      socket.end(head);
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks)
        .toString('utf8')
        .replace(/^Date: .*\r\n/m, '')
        .replace(/^x-request-id: \d+\r\n/m, '');
    },
    async close() {
      app.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const DP = '/meshes/default/dataplanes';

describe('kept answers of GETs', () => {
  let api: TestApi;
  let server: Awaited<ReturnType<typeof serve>>;
  beforeEach(async () => {
    api = await startApi();
    for (let i = 0; i < 12; i++) expect((await api.put(`${DP}/dp-${String(i).padStart(2, '0')}`, dataplane(`dp-${String(i).padStart(2, '0')}`, { tags: { 'mesh.io/service': `svc-${i % 3}` } }))).status).toBe(201);
    await api.store.create({
      type: 'DataplaneInsight',
      mesh: 'default',
      name: 'dp-01',
      spec: JSON.stringify({ subscriptions: [{ id: 's-1', controlPlaneInstanceId: 'cp', connectTime: '2024-05-06T07:00:00Z', status: { total: {} } }] }),
    });
    server = await serve(api.ctx);
  });
  afterEach(async () => {
    await server.close();
    await api.close();
  });

  const SCENARIOS = {
    'one resource': `${DP}/dp-05`,
    'one resource, Kubernetes shape': `${DP}/dp-05?format=k8s`,
    'a first page': `${DP}?size=5`,
    'a deep page': `${DP}?size=5&offset=10`,
    'a page after a cursor': `${DP}?size=5&offset=~ZGVmYXVsdABkcC0wMw`,
    'a mesh insight': '/mesh-insights/default',
    'the service insights': '/meshes/default/service-insights?size=100',
    'an overview page': '/meshes/default/dataplanes+insights?size=5',
    'one overview': '/meshes/default/dataplanes+insights/dp-01',
    'inspection of a proxy': `${DP}/dp-05/policies`,
  };

  it.each(Object.entries(SCENARIOS))('answers %s again with the bytes, log line and metrics of the first answer', async (_, path) => {
    const first = await server.raw('GET', path);
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(await server.raw('GET', path)).toBe(first);
    // With the CORS headers of a page of another origin, set before the answer's own.
    const cors = await server.raw('GET', path, { Origin: 'https://gui.example' });
    expect(cors).toBe(first.replace('\r\n', '\r\nAccess-Control-Allow-Origin: https://gui.example\r\nAccess-Control-Expose-Headers: Access-Control-Allow-Origin\r\n'));
    expect(server.logged).toEqual(Array(3).fill(`GET ${path} 200`));
    expect(new Set(server.observed).size).toBe(1);
    expect(server.observed).toHaveLength(3);
  });

  it('answers a page retired by a write with the page as it is now', async () => {
    const before = await server.raw('GET', `${DP}?size=5`);
    await server.raw('GET', `${DP}?size=5`);
    api.advanceClock(1000);
    expect((await api.put(`${DP}/dp-02`, { ...dataplane('dp-02'), networking: { address: '10.0.0.9', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'svc-2' } }] } })).status).toBe(200);
    const after = await server.raw('GET', `${DP}?size=5`);
    expect(after).not.toBe(before);
    expect(after).toContain('"address":"10.0.0.9"');
    const insight = JSON.parse((await server.raw('GET', '/mesh-insights/default')).split('\r\n\r\n')[1]!);
    expect(insight.dataplanes.total).toBe(12);
    expect((await api.put(`${DP}/dp-99`, dataplane('dp-99'))).status).toBe(201);
    expect(JSON.parse((await server.raw('GET', '/mesh-insights/default')).split('\r\n\r\n')[1]!).dataplanes.total).toBe(13);
    expect(JSON.parse((await server.raw('GET', `${DP}/dp-05/policies`)).split('\r\n\r\n')[1]!).kind).toBe('SidecarDataplane');
  });

  it('leaves to the handlers what they answer otherwise: missing resources, HEAD, refused media types', async () => {
    expect(await server.raw('GET', `${DP}/dp-50`)).toMatch(/^HTTP\/1\.1 404 /);
    expect((await api.put(`${DP}/dp-50`, dataplane('dp-50'))).status).toBe(201);
    expect(await server.raw('GET', `${DP}/dp-50`)).toMatch(/^HTTP\/1\.1 200 /);
    await server.raw('GET', `${DP}/dp-05`);
    expect(await server.raw('HEAD', `${DP}/dp-05`)).toMatch(/^HTTP\/1\.1 405 [^]*\r\nAllow: GET, PUT, DELETE\r\n/);
    expect(await server.raw('GET', `${DP}/dp-05`, { Accept: 'text/html' })).toMatch(/^HTTP\/1\.1 406 /);
    // Conditional requests are answered in full, as before.
    expect(await server.raw('GET', `${DP}/dp-05`, { 'If-None-Match': '*', 'If-Modified-Since': 'Mon, 06 May 2030 07:00:00 GMT' })).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('kept answers and callers', () => {
  let api: TestApi;
  let server: Awaited<ReturnType<typeof serve>>;
  beforeEach(async () => {
    api = await startApi();
    expect((await api.put(`${DP}/dp-1`, dataplane('dp-1'))).status).toBe(201);
    expect((await api.put('/meshes/default/secrets/s-1', { type: 'Secret', mesh: 'default', name: 's-1', data: 'YWJj' })).status).toBe(201);
    server = await serve(api.ctx);
  });
  afterEach(async () => {
    await server.close();
    await api.close();
  });

  // Under another host name than loopback's, a local caller is anonymous (access.ts).
  const ELSEWHERE = { Host: 'cp.example' };

  it('refuses a token that does not verify with 401, even for an answer kept for an anonymous caller', async () => {
    const raw = (headers: Record<string, string>) => server.raw('GET', `${DP}/dp-1`, headers);
    expect(await raw(ELSEWHERE)).toMatch(/^HTTP\/1\.1 200 /);
    expect(await raw(ELSEWHERE)).toMatch(/^HTTP\/1\.1 200 /);
    const refused = await raw({ ...ELSEWHERE, Authorization: 'Bearer not-a-token' });
    expect(refused).toMatch(/^HTTP\/1\.1 401 /);
    expect(JSON.parse(refused.split('\r\n\r\n')[1]!)).toEqual(stdError(401, 'Invalid authentication data', 'Unauthenticated'));
  });

  it('answers what admins alone may read per caller: 403 for another', async () => {
    expect(await server.raw('GET', '/meshes/default/secrets/s-1')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await server.raw('GET', '/meshes/default/secrets/s-1')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await server.raw('GET', '/meshes/default/secrets/s-1', ELSEWHERE)).toMatch(/^HTTP\/1\.1 403 /);
    expect(await server.raw('GET', '/meshes/default/secrets?size=10', ELSEWHERE)).toMatch(/^HTTP\/1\.1 403 /);
  });
});

describe('a route declaring what its answer is made of', () => {
  it('runs its handler once until a write of that type; other routes run theirs for every request', async () => {
    const api = await startApi();
    const runs = { kept: 0, plain: 0 };
    const server = await serve(api.ctx, (table) =>
      table
        .add({ method: 'GET', path: '/test/kept', doc: { summary: 'kept', tag: 'Test', responses: {}, errors: [] }, answerChangesWith: ['Dataplane'], handler: (_req, res) => sendJson(res, 200, `{"run":${++runs.kept}}`) })
        .add({ method: 'GET', path: '/test/plain', doc: { summary: 'plain', tag: 'Test', responses: {}, errors: [] }, handler: (_req, res) => sendJson(res, 200, `{"run":${++runs.plain}}`) }),
    );
    try {
      const body = async (path: string) => (await server.raw('GET', path)).split('\r\n\r\n')[1];
      expect([await body('/test/kept'), await body('/test/kept'), await body('/test/kept')]).toEqual(Array(3).fill('{"run":1}'));
      expect([await body('/test/plain'), await body('/test/plain')]).toEqual(['{"run":1}', '{"run":2}']);
      expect((await api.put('/meshes/default/traffic-routes/tr-1', { type: 'TrafficRoute', mesh: 'default', name: 'tr-1', sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }], conf: { destination: { 'mesh.io/service': '*' } } })).status).toBe(201);
      expect(await body('/test/kept')).toBe('{"run":1}');
      expect((await api.put(`${DP}/dp-1`, dataplane('dp-1'))).status).toBe(201);
      expect([await body('/test/kept'), await body('/test/kept')]).toEqual(['{"run":2}', '{"run":2}']);
      expect(runs.kept).toBe(2);
    } finally {
      await server.close();
      await api.close();
    }
  });
});
