// CORS as `apiServer.corsAllowedDomains` configures it (docs/api.md, HTTP).
import { afterEach, describe, expect, it } from 'vitest';
import { startApi, type Reply, type TestApi, type TestApiOptions } from './testing.js';

const GUI = 'http://gui.example.com';

let api: TestApi | undefined;
const start = async (options: TestApiOptions = {}) => (api = await startApi({ defaultMesh: false, ...options }));
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const corsHeaders = (reply: Reply) => [...reply.headers.keys()].filter((name) => name.startsWith('access-control-'));
const preflight = (api: TestApi, path: string, headers: Record<string, string>) => api.request('OPTIONS', path, { headers: { origin: GUI, ...headers } });

describe('an allowed origin', () => {
  it('is echoed, never `*`, with the exposed headers', async () => {
    const api = await start();
    const reply = await api.get('/meshes', { origin: GUI });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('access-control-allow-origin')).toBe(GUI);
    expect(reply.headers.get('access-control-expose-headers')).toBe('Access-Control-Allow-Origin');
  });

  it('gets the CORS headers on errors too', async () => {
    const api = await start();
    const reply = await api.get('/meshes/missing', { origin: GUI });
    expect(reply.status).toBe(404);
    expect(reply.headers.get('access-control-allow-origin')).toBe(GUI);
  });

  it('matches a configured domain exactly, ignoring letter case', async () => {
    const api = await start({ corsAllowedDomains: [GUI] });
    expect((await api.get('/meshes', { origin: 'http://GUI.example.com' })).headers.get('access-control-allow-origin')).toBe('http://GUI.example.com');
  });

  it('is any origin when the list is empty', async () => {
    const api = await start({ corsAllowedDomains: [] });
    expect((await api.get('/meshes', { origin: 'http://elsewhere.example' })).headers.get('access-control-allow-origin')).toBe('http://elsewhere.example');
  });
});

describe('an origin that is not allowed', () => {
  it('is served without any CORS header', async () => {
    const api = await start({ corsAllowedDomains: [GUI] });
    const reply = await api.get('/meshes', { origin: 'http://evil.example' });
    expect(reply.status).toBe(200);
    expect(corsHeaders(reply)).toEqual([]);
  });

  it('is not matched as a pattern or a suffix', async () => {
    const api = await start({ corsAllowedDomains: [GUI] });
    expect(corsHeaders(await api.get('/meshes', { origin: `${GUI}.evil.example` }))).toEqual([]);
    expect(corsHeaders(await api.get('/meshes', { origin: 'http://guiXexample.com' }))).toEqual([]);
  });

  it('gets a 405 for a preflight, as any OPTIONS request', async () => {
    const api = await start({ corsAllowedDomains: [GUI] });
    const reply = await api.request('OPTIONS', '/meshes', { headers: { origin: 'http://evil.example', 'access-control-request-method': 'GET' } });
    expect(reply.status).toBe(405);
    expect(corsHeaders(reply)).toEqual([]);
  });
});

describe('the origin `null` (a sandboxed frame, a local file)', () => {
  it.each([[['.*']], [[]], [['null']]])('is never allowed, the list being %j', async (corsAllowedDomains) => {
    const api = await start({ corsAllowedDomains });
    const reply = await api.get('/meshes', { origin: 'null' });
    expect(reply.status).toBe(200);
    expect(corsHeaders(reply)).toEqual([]);
    const refused = await api.request('OPTIONS', '/meshes', { headers: { origin: 'null', 'access-control-request-method': 'GET' } });
    expect(refused.status).toBe(405);
    expect(corsHeaders(refused)).toEqual([]);
  });
});

describe('credentials', () => {
  it('are never allowed, to an answer or a preflight', async () => {
    const api = await start({ corsAllowedDomains: ['.*', GUI] });
    expect((await api.get('/meshes', { origin: GUI })).headers.get('access-control-allow-credentials')).toBeNull();
    const reply = await preflight(api, '/meshes/default/traffic-routes/tr-1', { 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type' });
    expect(reply.headers.get('access-control-allow-origin')).toBe(GUI);
    expect(reply.headers.get('access-control-allow-credentials')).toBeNull();
  });
});

describe('a request without an Origin', () => {
  it('gets no CORS header', async () => {
    const api = await start();
    expect(corsHeaders(await api.get('/meshes'))).toEqual([]);
  });
});

describe('a preflight request', () => {
  it('answers 200 with an empty body and the methods of the path', async () => {
    const api = await start();
    const reply = await preflight(api, '/meshes/default/traffic-routes/tr-1', { 'access-control-request-method': 'PUT' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
    expect(reply.headers.get('access-control-allow-origin')).toBe(GUI);
    expect(reply.headers.get('access-control-allow-methods')?.split(',').sort()).toEqual(['DELETE', 'GET', 'PUT']);
  });

  it('lists only GET for a collection', async () => {
    const api = await start();
    const reply = await preflight(api, '/meshes', { 'access-control-request-method': 'GET' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('access-control-allow-methods')).toBe('GET');
  });

  it('answers 200 without allowing anything for a method the path does not have', async () => {
    const api = await start();
    const reply = await preflight(api, '/meshes', { 'access-control-request-method': 'PUT' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
    expect(reply.headers.get('access-control-allow-methods')).toBeNull();
  });

  it('answers 200 without allowing anything for an unknown path', async () => {
    const api = await start();
    const reply = await preflight(api, '/no/such/path', { 'access-control-request-method': 'GET' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('access-control-allow-methods')).toBeNull();
  });

  it('is not mistaken for a preflight without Access-Control-Request-Method', async () => {
    const api = await start();
    const reply = await api.request('OPTIONS', '/meshes', { headers: { origin: GUI } });
    expect(reply.status).toBe(405);
    expect(reply.headers.get('access-control-allow-origin')).toBe(GUI);
  });
});
