// End to end: the built mesh-zone binary, started as a standalone control plane on free ports,
// driven over HTTP as an operator would.
import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES, type Example } from './testing/examples.js';
import { freePort, startControlPlane, type ControlPlaneProcess } from './testing/process.js';

type Started = Awaited<ReturnType<typeof startControlPlane>>;
let cp: Started;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const collection = (example: Example) => example.path.replace('{mesh}', 'default');
const nameOf = (example: Example, prefix: string) => `${prefix}-${example.path.split('/').at(-1)}`;
const bodyOf = (example: Example, name: string, spec: Record<string, unknown>) => ({
  type: example.type,
  ...(example.meshScoped ? { mesh: 'default' } : {}),
  name,
  ...spec,
});

async function call(base: ControlPlaneProcess, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base.url}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
}

beforeAll(async () => {
  cp = await startControlPlane();
});

afterAll(async () => {
  await cp?.stop();
});

describe('mesh-zone, standalone', () => {
  it('starts with the default mesh and its default policies', async () => {
    const meshes = await call(cp, 'GET', '/meshes');
    expect(meshes.status).toBe(200);
    expect(meshes.body).toMatchObject({ total: 1, items: [{ type: 'Mesh', name: 'default' }], next: null });
    for (const [path, name] of [
      ['traffic-permissions', 'allow-all-default'],
      ['traffic-routes', 'route-all-default'],
      ['timeouts', 'timeout-all-default'],
      ['circuit-breakers', 'circuit-breaker-all-default'],
      ['retries', 'retry-all-default'],
      ['secrets', 'dataplane-token-signing-key-default-1'],
    ]) {
      expect((await call(cp, 'GET', `/meshes/default/${path}/${name}`)).status).toBe(200);
    }
  });

  it.each(EXAMPLES.map((e) => [e.path, e] as const))('creates, reads, lists, updates and deletes %s', async (_path, example) => {
    const name = nameOf(example, 'e2e');
    const path = `${collection(example)}/${name}`;

    const created = await call(cp, 'PUT', path, bodyOf(example, name, example.spec));
    expect(created).toMatchObject({ status: 201, body: {} });
    expect(created.headers.get('content-type')).toMatch(/^application\/json/);

    const read = await call(cp, 'GET', path);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ type: example.type, name, ...(example.meshScoped ? { mesh: 'default' } : {}), ...example.spec });
    expect(read.body!.creationTime).toMatch(TIMESTAMP);
    expect(read.body!.modificationTime).toBe(read.body!.creationTime);

    const listed = await call(cp, 'GET', `${collection(example)}?name=${name}`);
    expect(listed.body).toMatchObject({ total: 1, items: [{ name }], next: null });

    await new Promise((r) => setTimeout(r, 5));
    const updated = await call(cp, 'PUT', path, bodyOf(example, name, example.update));
    expect(updated).toMatchObject({ status: 200, body: {} });
    const reread = await call(cp, 'GET', path);
    expect(reread.body).toMatchObject(example.update);
    expect(reread.body!.creationTime).toBe(read.body!.creationTime);
    expect(reread.body!.modificationTime > read.body!.modificationTime).toBe(true);

    expect(await call(cp, 'DELETE', path)).toMatchObject({ status: 200, body: {} });
    expect(await call(cp, 'GET', path)).toMatchObject({
      status: 404,
      body: { type: '/std-errors', status: 404, title: 'Could not retrieve a resource', detail: 'Not found' },
    });
    expect((await call(cp, 'DELETE', path)).body).toMatchObject({ status: 404, title: 'Could not delete a resource', detail: 'Not found' });
  });

  it('keeps every kind across a restart', async () => {
    const kept = new Map<string, string>();
    for (const example of EXAMPLES) {
      const name = nameOf(example, 'kept');
      const path = `${collection(example)}/${name}`;
      expect((await call(cp, 'PUT', path, bodyOf(example, name, example.spec))).status).toBe(201);
      kept.set(path, (await call(cp, 'GET', path)).body!.creationTime as string);
    }

    expect(await cp.stop()).toBe(0);
    cp = await startControlPlane({ workDir: cp.workDir, ports: cp.ports });

    for (const [path, creationTime] of kept) {
      const read = await call(cp, 'GET', path);
      expect(read.status, path).toBe(200);
      expect(read.body!.creationTime).toBe(creationTime);
    }
    expect((await call(cp, 'GET', '/meshes')).body).toMatchObject({ total: 2 });
  });

  it('answers bad input with the standard error body and stores nothing', async () => {
    const path = '/meshes/default/traffic-routes/bad';
    const notJson = await fetch(`${cp.url}${path}`, { method: 'PUT', body: '{"type": ', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ type: '/std-errors', status: 400, title: 'Bad Request', detail: expect.stringMatching(/^invalid TrafficRoute object: '/) });

    const yaml = await fetch(`${cp.url}${path}`, { method: 'PUT', body: 'type: TrafficRoute', headers: { 'content-type': 'application/yaml' } });
    expect(yaml.status).toBe(415);
    expect(await yaml.json()).toMatchObject({ type: '/std-errors', status: 415 });

    const invalid = await call(cp, 'PUT', path, { type: 'TrafficRoute', mesh: 'default', name: 'bad', sources: [], destinations: [] });
    expect(invalid).toMatchObject({
      status: 400,
      body: {
        title: 'Could not process a resource',
        detail: 'Resource is not valid',
        invalid_parameters: expect.arrayContaining([{ field: 'sources', reason: 'must have at least one element' }]),
      },
    });

    const missingMesh = await call(cp, 'PUT', '/meshes/nope/traffic-permissions/tp', {
      type: 'TrafficPermission',
      mesh: 'nope',
      name: 'tp',
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
    });
    expect(missingMesh).toMatchObject({
      status: 400,
      body: { title: 'Could not create a resource', detail: 'Mesh is not found', invalid_parameters: [{ field: 'mesh', reason: 'mesh of name nope is not found' }] },
    });

    expect((await call(cp, 'GET', path)).status).toBe(404);
    expect((await call(cp, 'GET', '/meshes/nope/traffic-permissions')).body).toEqual({ total: 0, items: [], next: null });
    expect(await call(cp, 'GET', '/no-such-thing')).toMatchObject({ status: 404, body: { type: '/std-errors', status: 404 } });
    const wrongMethod = await call(cp, 'POST', '/meshes/default');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, PUT, DELETE');
  });

  it('serves the same API over HTTPS with its generated certificate', async () => {
    const { request } = await import('node:https');
    const status = await new Promise<number>((resolve, reject) => {
      request(`${cp.httpsUrl}/meshes`, { rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(200);
  });

  it('refuses to start on a port already in use, with a clear error', async () => {
    await expect(startControlPlane({ ports: { ...cp.ports, diagnostics: cp.ports.diagnostics + 1 } })).rejects.toThrow(/already in use/);
  });

  it('refuses to start when the data plane port is taken, with a clear error', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const ports = { http: await freePort(), https: await freePort(), diagnostics: await freePort(), kds: await freePort() };
      await expect(startControlPlane({ ports, env: { MESH_DP_SERVER_PORT: String(port) } })).rejects.toThrow(`dpServer.port (MESH_DP_SERVER_PORT): port ${port} is already in use`);
    } finally {
      taken.close();
    }
  });
});
