// Who may do what (docs/tokens.md): secrets are for admins only; a bad
// bearer token is refused. With `localhostIsAdmin: false` the test client is anonymous; with it,
// a web page of another origin or under another host name is not.
import { getKind } from '@mesh/model';
import { afterEach, describe, expect, it } from 'vitest';
import { dataplane, expectJson, secret, startApi, stdError, trafficRoute, type TestApi, type TestApiOptions } from './testing.js';

const denied = (type: string) =>
  stdError(403, 'Access Denied', `user "mesh-system:anonymous/mesh-system:unauthenticated" cannot access the resource of type "${type}"`);
const UNAUTHENTICATED = stdError(401, 'Invalid authentication data', 'Unauthenticated');

let api: TestApi | undefined;
const start = async (options: TestApiOptions = {}) => (api = await startApi(options));
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** A server where the test client is anonymous, holding secret `s-1` and global secret `gs-1`. */
async function anonymous(): Promise<TestApi> {
  const api = await start({ localhostIsAdmin: false });
  await api.manager.apply(getKind('Secret'), { mesh: 'default', name: 's-1' }, { type: 'Secret', mesh: 'default', name: 's-1', data: 'aHVzaA==' });
  await api.manager.apply(getKind('GlobalSecret'), { mesh: '', name: 'gs-1' }, { type: 'GlobalSecret', name: 'gs-1', data: 'aHVzaA==' });
  return api;
}

describe('secrets for a caller who is not an admin', () => {
  it('refuses to list them with 403', async () => {
    const api = await anonymous();
    expectJson(await api.get('/meshes/default/secrets'), 403, denied('Secret'));
    expectJson(await api.get('/secrets'), 403, denied('Secret'));
  });

  it('refuses to show one with 403', async () => {
    const api = await anonymous();
    expectJson(await api.get('/meshes/default/secrets/s-1'), 403, denied('Secret'));
  });

  it('answers 403, not 404, for a secret that does not exist', async () => {
    const api = await anonymous();
    expectJson(await api.get('/meshes/default/secrets/missing'), 403, denied('Secret'));
  });

  it('refuses to write one with 403 and stores nothing', async () => {
    const api = await anonymous();
    const before = await api.snapshot();
    expectJson(await api.put('/meshes/default/secrets/s-2', secret('s-2', 'hush')), 403, denied('Secret'));
    expectJson(await api.put('/meshes/default/secrets/s-1', secret('s-1', 'changed')), 403, denied('Secret'));
    expect(await api.snapshot()).toEqual(before);
  });

  it('refuses to delete one with 403 and keeps it', async () => {
    const api = await anonymous();
    expectJson(await api.del('/meshes/default/secrets/s-1'), 403, denied('Secret'));
    expect(await api.snapshot()).toContainEqual(expect.stringMatching(/^Secret default\/s-1 /));
  });

  it('answers 404 when deleting a secret that does not exist', async () => {
    const api = await anonymous();
    expectJson(await api.del('/meshes/default/secrets/missing'), 404, stdError(404, 'Could not delete a resource', 'Not found'));
  });

  it('refuses global secrets with 403 naming GlobalSecret', async () => {
    const api = await anonymous();
    const before = await api.snapshot();
    expectJson(await api.get('/global-secrets'), 403, denied('GlobalSecret'));
    expectJson(await api.get('/global-secrets/gs-1'), 403, denied('GlobalSecret'));
    expectJson(await api.put('/global-secrets/gs-2', { type: 'Secret', name: 'gs-2', data: 'eA==' }), 403, denied('GlobalSecret'));
    expectJson(await api.del('/global-secrets/gs-1'), 403, denied('GlobalSecret'));
    expect(await api.snapshot()).toEqual(before);
  });

  it('leaves every other kind open', async () => {
    const api = await anonymous();
    expect((await api.get('/meshes')).status).toBe(200);
    expectJson(await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1')), 201, {});
    expectJson(await api.del('/meshes/default/traffic-routes/tr-1'), 200, {});
  });
});

describe('secrets for an admin', () => {
  it('lets a localhost caller read and write them', async () => {
    const api = await start();
    expectJson(await api.put('/meshes/default/secrets/s-1', secret('s-1', 'hush')), 201, {});
    expect((await api.get('/meshes/default/secrets/s-1')).body.data).toBe(Buffer.from('hush').toString('base64'));
    expectJson(await api.put('/global-secrets/gs-1', { type: 'Secret', name: 'gs-1', data: 'eA==' }), 201, {});
  });
});

describe('bearer tokens', () => {
  it('refuses an invalid token with 401', async () => {
    const api = await start({ localhostIsAdmin: false });
    expectJson(await api.get('/meshes', { authorization: 'Bearer x' }), 401, UNAUTHENTICATED);
  });

  it('refuses a write with an invalid token with 401, storing nothing', async () => {
    const api = await start({ localhostIsAdmin: false });
    const before = await api.snapshot();
    expectJson(await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1'), { authorization: 'Bearer x' }), 401, UNAUTHENTICATED);
    expect(await api.snapshot()).toEqual(before);
  });

  it('keeps a localhost admin an admin whatever token it sends', async () => {
    const api = await start();
    expect((await api.get('/meshes/default/secrets', { authorization: 'Bearer x' })).status).toBe(200);
  });
});

describe('a web page in a browser on the host', () => {
  const GUI = 'https://gui.example';
  /** What only an admin may do: secrets, global secrets, token issuing, configuration dumps. */
  const ADMIN_ONLY: Array<{ method: string; path: string; body?: unknown }> = [
    { method: 'GET', path: '/meshes/default/secrets/s-1' },
    { method: 'GET', path: '/global-secrets/admin-user-token' },
    { method: 'PUT', path: '/global-secrets/gs-1', body: { type: 'Secret', name: 'gs-1', data: 'eA==' } },
    { method: 'POST', path: '/tokens/dataplane', body: { mesh: 'default', name: 'web-1' } },
    { method: 'POST', path: '/tokens/user', body: { name: 'jane', validFor: '1h' } },
    { method: 'POST', path: '/tokens/zone', body: { zone: 'zone-1', scope: ['cp'] } },
    { method: 'GET', path: '/meshes/default/dataplanes/web-1/xds' },
  ];

  /** A localhost-admin server holding secret `s-1`, global secret `gs-1` and dataplane `web-1` (the admin token is bootstrapped). */
  async function host(options: TestApiOptions = {}): Promise<TestApi> {
    const api = await start(options);
    await api.manager.apply(getKind('Secret'), { mesh: 'default', name: 's-1' }, { type: 'Secret', mesh: 'default', name: 's-1', data: 'aHVzaA==' });
    await api.manager.apply(getKind('GlobalSecret'), { mesh: '', name: 'gs-1' }, { type: 'GlobalSecret', name: 'gs-1', data: 'aHVzaA==' });
    expect((await api.put('/meshes/default/dataplanes/web-1', dataplane('web-1'))).status).toBe(201);
    return api;
  }

  /** `METHOD path status` of every admin-only request sent with these headers. */
  const statuses = (api: TestApi, headers: Record<string, string>) =>
    Promise.all(ADMIN_ONLY.map(async ({ method, path, body }) => `${method} ${path} ${(await api.request(method, path, { headers, ...(body ? { body } : {}) })).status}`));
  const all = (status: number) => ADMIN_ONLY.map(({ method, path }) => `${method} ${path} ${status}`);
  const hostOf = (api: TestApi) => new URL(api.url).host;

  it('is refused everything only an admin may do when it is of another origin', async () => {
    const api = await host();
    for (const origin of ['https://evil.example', 'null', 'http://localhost:1', `https://${hostOf(api)}`]) {
      expect(await statuses(api, { origin }), origin).toEqual(all(403));
    }
    expectJson(await api.get('/global-secrets/admin-user-token', { origin: 'https://evil.example' }), 403, denied('GlobalSecret'));
    expectJson(await api.get('/who-am-i', { origin: 'null' }), 200, { name: 'mesh-system:anonymous', groups: ['mesh-system:unauthenticated'] });
  });

  it('is refused them when it reaches the API under another host name (DNS rebinding)', async () => {
    const api = await host();
    const port = new URL(api.url).port;
    expect(await statuses(api, { host: `evil.example:${port}` })).toEqual(all(403));
    expect(await statuses(api, { host: 'evil.example' })).toEqual(all(403));
    // The page's own origin is the rebound name: being same-origin grants nothing either.
    expect(await statuses(api, { host: `evil.example:${port}`, origin: `http://evil.example:${port}` })).toEqual(all(403));
    expect(await statuses(api, { host: `127.0.0.1.evil.example:${port}` })).toEqual(all(403));
  });

  it('leaves a tool that sends no Origin, and a page of the API own origin, the admin', async () => {
    const api = await host();
    const port = new URL(api.url).port;
    expect(await statuses(api, {})).toEqual(all(200));
    expect(await statuses(api, { origin: api.url })).toEqual(all(200));
    for (const name of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '[::1]', '[::ffff:127.0.0.1]']) {
      expect((await api.get('/global-secrets/admin-user-token', { host: name })).status, name).toBe(200);
      expect((await api.get('/global-secrets/admin-user-token', { host: `${name}:${port}`, origin: `http://${name}:${port}` })).status, name).toBe(200);
    }
  });

  it('is the admin when its origin is listed in apiServer.corsAllowedDomains, never by `.*`', async () => {
    const api = await host({ corsAllowedDomains: ['.*', GUI] });
    expect(await statuses(api, { origin: GUI })).toEqual(all(200));
    expect(await statuses(api, { origin: 'HTTPS://GUI.example' })).toEqual(all(200));
    expect(await statuses(api, { origin: 'https://evil.example' })).toEqual(all(403));
    await api.close();
    const anyOrigin = await host({ corsAllowedDomains: [] });
    expect(await statuses(anyOrigin, { origin: 'https://evil.example' })).toEqual(all(403));
  });

  it('is who its bearer token says it is', async () => {
    const api = await host();
    const stored = await api.manager.get(getKind('GlobalSecret'), '', 'admin-user-token');
    const adminToken = Buffer.from((JSON.parse(stored!.spec) as { data: string }).data, 'base64').toString('utf8');
    expect(await statuses(api, { origin: 'https://evil.example', authorization: `Bearer ${adminToken}` })).toEqual(all(200));
    expect(await statuses(api, { host: 'evil.example', authorization: `Bearer ${adminToken}` })).toEqual(all(200));
    expectJson(await api.get('/meshes', { origin: 'https://evil.example', authorization: 'Bearer x' }), 401, UNAUTHENTICATED);
  });
});
