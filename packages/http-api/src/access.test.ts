// Who may do what (docs/tokens.md): secrets are for admins only; a bad
// bearer token is refused. With `localhostIsAdmin: false` the test client is anonymous.
import { getKind } from '@mesh/model';
import { afterEach, describe, expect, it } from 'vitest';
import { expectJson, secret, startApi, stdError, trafficRoute, type TestApi, type TestApiOptions } from './testing.js';

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
