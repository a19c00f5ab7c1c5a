// The HTTP layer around the resources: routing, media types, body limits and hostile input
// (docs/api.md, HTTP and Errors: router errors use the standard JSON error body).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectJson, startApi, stdError, trafficRoute, type Reply, type TestApi } from './testing.js';

const METHOD_NOT_ALLOWED = stdError(405, 'Method not Allowed', 'Method not allowed');
const allowed = (reply: Reply) => (reply.headers.get('allow') ?? '').split(',').map((m) => m.trim()).sort();

/** Any refusal: a 4xx with the standard error body, never a 500. */
function expectRefusal(reply: Reply): void {
  expect(reply.status, reply.text).toBeGreaterThanOrEqual(400);
  expect(reply.status, reply.text).toBeLessThan(500);
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  expect(reply.body).toMatchObject({ type: '/std-errors', status: reply.status, title: expect.any(String), detail: expect.any(String) });
  expect(reply.body.details).toBe(reply.body.detail);
}

describe('routing', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await api.close();
  });

  it('answers an unknown path with 404 and the standard error body', async () => {
    expectJson(await api.get('/no/such/thing'), 404, stdError(404, 'Not Found', 'Page Not Found'));
  });

  it('answers an unknown path with 404 whatever the method', async () => {
    expectJson(await api.request('POST', '/no/such/thing', { body: {} }), 404, stdError(404, 'Not Found', 'Page Not Found'));
  });

  it('answers an unknown collection under a mesh with 404', async () => {
    expectJson(await api.get('/meshes/default/no-such-kind'), 404, stdError(404, 'Not Found', 'Page Not Found'));
  });

  it('ignores a trailing slash', async () => {
    expect((await api.get('/meshes/')).body.total).toBe(1);
    expect((await api.get('/meshes/default/')).body.name).toBe('default');
  });

  it('decodes percent-encoded path segments', async () => {
    expect((await api.get('/meshes/def%61ult')).body.name).toBe('default');
  });

  it('answers a malformed percent-encoding with 404, not 500', async () => {
    expectJson(await api.get('/meshes/%E0%A4%A'), 404, stdError(404, 'Not Found', 'Page Not Found'));
  });

  it.each(['POST', 'PATCH'])('answers %s on a resource with 405, the standard body and Allow', async (method) => {
    const reply = await api.request(method, '/meshes/default/traffic-routes/route-all-default', { body: {} });
    expectJson(reply, 405, METHOD_NOT_ALLOWED);
    expect(allowed(reply)).toEqual(['DELETE', 'GET', 'PUT']);
  });

  it('answers HEAD with 405 and Allow', async () => {
    const reply = await api.request('HEAD', '/meshes/default');
    expect(reply.status).toBe(405);
    expect(allowed(reply)).toEqual(['DELETE', 'GET', 'PUT']);
  });

  it('answers a write on a collection with 405 and Allow: GET', async () => {
    const reply = await api.request('POST', '/meshes', { body: { type: 'Mesh', name: 'x' } });
    expectJson(reply, 405, METHOD_NOT_ALLOWED);
    expect(allowed(reply)).toEqual(['GET']);
  });

  it('answers OPTIONS without CORS headers with 405', async () => {
    expectJson(await api.request('OPTIONS', '/meshes'), 405, METHOD_NOT_ALLOWED);
  });
});

describe('media types', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const body = JSON.stringify(trafficRoute('tr-1'));
  const unsupported = (reply: Reply) => {
    expect(reply.status).toBe(415);
    expectRefusal(reply);
  };

  it('refuses a body without a Content-Type with 415', async () => {
    const before = await api.snapshot();
    unsupported(await api.request('PUT', '/meshes/default/traffic-routes/tr-1', { raw: body, contentType: null }));
    expect(await api.snapshot()).toEqual(before);
  });

  it('refuses a text/plain body with 415', async () => {
    unsupported(await api.request('PUT', '/meshes/default/traffic-routes/tr-1', { raw: body, contentType: 'text/plain' }));
  });

  it('refuses YAML with 415', async () => {
    const yaml = 'type: TrafficRoute\nmesh: default\nname: tr-1\n';
    unsupported(await api.request('PUT', '/meshes/default/traffic-routes/tr-1', { raw: yaml, contentType: 'application/yaml' }));
  });

  it('accepts JSON with parameters and in any letter case', async () => {
    expect((await api.request('PUT', '/meshes/default/traffic-routes/tr-2', { raw: body.replace(/tr-1/g, 'tr-2'), contentType: 'application/json; charset=utf-8' })).status).toBe(201);
    expect((await api.request('PUT', '/meshes/default/traffic-routes/tr-3', { raw: body.replace(/tr-1/g, 'tr-3'), contentType: 'Application/JSON' })).status).toBe(201);
  });

  it('refuses an Accept header that excludes JSON with 406', async () => {
    const reply = await api.get('/meshes', { accept: 'text/html' });
    expect(reply.status).toBe(406);
    expectRefusal(reply);
  });

  it('refuses a PUT whose Accept excludes JSON with 406, storing nothing', async () => {
    const before = await api.snapshot();
    const reply = await api.request('PUT', '/meshes/default/traffic-routes/tr-9', { body: trafficRoute('tr-9'), headers: { accept: 'application/xml' } });
    expect(reply.status).toBe(406);
    expect(await api.snapshot()).toEqual(before);
  });

  it.each(['*/*', 'application/*', 'application/json', 'text/html, application/json;q=0.9'])('serves Accept: %s', async (accept) => {
    expect((await api.get('/meshes', { accept })).status).toBe(200);
  });
});

describe('hostile input', () => {
  let api: TestApi;
  let before: string[];
  beforeEach(async () => {
    api = await startApi();
    before = await api.snapshot();
  });
  afterEach(async () => {
    await api.close();
  });

  const putRaw = (raw: string | Buffer, name = 'tr-1') => api.request('PUT', `/meshes/default/traffic-routes/${name}`, { raw });
  const NINE_MIB = 9 * 1024 * 1024;

  it('refuses a body over 8 MiB with 413 and the standard body', async () => {
    const reply = await putRaw(JSON.stringify({ ...trafficRoute('tr-1'), padding: 'x'.repeat(NINE_MIB) }));
    expect(reply.status).toBe(413);
    expectRefusal(reply);
    expect(await api.snapshot()).toEqual(before);
  });

  it('refuses a streamed body over 8 MiB with 413, and the client can go on', async () => {
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 9; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await fetch(`${api.url}/meshes/default/traffic-routes/tr-1`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { status: number }).status).toBe(413);
    for (let i = 0; i < 3; i++) expect((await api.get('/meshes')).status).toBe(200);
  });

  it('keeps serving the client after refusing a large body', async () => {
    await putRaw(JSON.stringify({ padding: 'x'.repeat(NINE_MIB) }));
    for (let i = 0; i < 3; i++) expect((await api.get('/meshes')).status).toBe(200);
  });

  it('accepts a body just under the limit', async () => {
    const reply = await putRaw(JSON.stringify({ ...trafficRoute('tr-1'), padding: 'x'.repeat(7 * 1024 * 1024) }));
    expect(reply.status).toBe(201);
  });

  it('refuses 10,000 levels of nested arrays with 400 Bad Request', async () => {
    const reply = await putRaw('['.repeat(10_000) + ']'.repeat(10_000));
    expect(reply.status).toBe(400);
    expectRefusal(reply);
    expect(reply.body.title).toBe('Bad Request');
  });

  it('refuses 10,000 levels of nested objects inside a spec field with 400 Bad Request', async () => {
    const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    const reply = await putRaw(JSON.stringify(trafficRoute('tr-1')).replace('"conf":{', `"conf":{"deep":${deep},`));
    expect(reply.status).toBe(400);
    expect(reply.body.title).toBe('Bad Request');
    expect(await api.snapshot()).toEqual(before);
  });

  const route = trafficRoute('tr-1');
  const HOSTILE: Array<[string, string | Buffer]> = [
    ['an array', '[]'],
    ['null', 'null'],
    ['a number', '42'],
    ['a string', '"traffic-route"'],
    ['true', 'true'],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
    ['a NUL byte', '{"type":"TrafficRoute\u0000"}'],
    ['conf null', JSON.stringify({ ...route, conf: null })],
    ['a null selector', JSON.stringify({ ...route, sources: [null] })],
    ['a null match', JSON.stringify({ ...route, sources: [{ match: null }] })],
    ['a numeric tag value', JSON.stringify({ ...route, sources: [{ match: { 'mesh.io/service': 5 } }] })],
    ['an object tag value', JSON.stringify({ ...route, sources: [{ match: { 'mesh.io/service': { $ne: 1 } } }] })],
    ['a __proto__ tag map', JSON.stringify(route).replace('{"mesh.io/service":"*"}', '{"__proto__":{"mesh.io/service":"*"}}')],
    ['a name of 10,000 characters', JSON.stringify({ ...route, name: 'a'.repeat(10_000) })],
    ['a name with a slash', JSON.stringify({ ...route, name: 'tr-1/../x' })],
    ['a number too large', JSON.stringify(route).replace('"conf":{', '"conf":{"loadBalancer":{"leastRequest":{"choiceCount":1e400}},')],
    ['a huge split weight', JSON.stringify({ ...route, conf: { split: [{ weight: 1e300, destination: { 'mesh.io/service': 'a' } }] } })],
    ['a negative split weight', JSON.stringify({ ...route, conf: { split: [{ weight: -1, destination: { 'mesh.io/service': 'a' } }] } })],
  ];

  it.each(HOSTILE)('refuses %s without a 500, storing nothing', async (_what, raw) => {
    expectRefusal(await putRaw(raw));
    expect(await api.snapshot()).toEqual(before);
  });

  it('refuses a URL name of 5,000 characters', async () => {
    const name = 'a'.repeat(5_000);
    const reply = await api.put(`/meshes/default/traffic-routes/${name}`, trafficRoute(name));
    expectRefusal(reply);
    expect(await api.snapshot()).toEqual(before);
  });

  it.each([
    ['mtls of the wrong type', { mtls: 'on' }],
    ['a provided backend with a string conf', { mtls: { backends: [{ name: 'ca-1', type: 'provided', conf: 'x' }] } }],
    ['a provided backend with garbage PEM', { mtls: { backends: [{ name: 'ca-1', type: 'provided', conf: { cert: { inlineString: 'x' }, key: { inlineString: 'y' } } }] } }],
    ['a provided backend with a bad inline source', { mtls: { backends: [{ name: 'ca-1', type: 'provided', conf: { cert: { inline: '***' }, key: { inline: '***' } } }] } }],
    ['a provided backend reading a missing file', { mtls: { backends: [{ name: 'ca-1', type: 'provided', conf: { cert: { file: '/nonexistent' }, key: { file: '/nonexistent' } } }] } }],
    ['an unknown CA type', { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'vault' }] } }],
    ['a builtin backend with a bad name', { mtls: { backends: [{ name: 'Bad Name', type: 'builtin' }] } }],
  ])('refuses a mesh with %s without a 500', async (_what, spec) => {
    expectRefusal(await api.put('/meshes/m-1', { type: 'Mesh', name: 'm-1', ...spec }));
    expect(await api.snapshot()).toEqual(before);
  });

  it('does not let __proto__ keys pollute objects', async () => {
    const raw = JSON.stringify(route).replace('{', '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},');
    const reply = await putRaw(raw);
    expect(reply.status).toBeLessThan(500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const stored = await api.get('/meshes/default/traffic-routes/tr-1');
    if (stored.status === 200) expect(stored.text).not.toContain('polluted');
  });

  it('never answers a list query with a 500', async () => {
    for (const query of ['size=%FF', 'offset=1e999', 'size=99999999999999999999', 'name=%00', 'tag=:', 'tag=::', 'tag=%E0%A4%A', 'gateway[]=x', 'size=1&size=2']) {
      const reply = await api.get(`/meshes/default/traffic-routes?${query}`);
      expect(reply.status, `${query}: ${reply.text}`).toBeLessThan(500);
    }
  });
});
