// Control-plane modes that refuse writes (docs/api.md, Modes): a read-only API, a zone control
// plane, a global control plane. All refusals share one 405 body.
import { afterEach, describe, expect, it } from 'vitest';
import { dataplane, expectJson, secret, startApi, stdError, trafficRoute, type TestApi, type TestApiOptions } from './testing.js';

const REFUSED = stdError(405, 'Method not Allowed', 'Method not allowed');

const zoneIngress = { type: 'ZoneIngress', name: 'zi-1', networking: { address: '10.0.0.1', port: 10001 } };
const zoneEgress = { type: 'ZoneEgress', name: 'ze-1', networking: { address: '10.0.0.2', port: 10002 } };

let api: TestApi | undefined;
const start = async (options: TestApiOptions) => (api = await startApi(options));
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('a read-only API', () => {
  it('refuses PUT with 405 and stores nothing', async () => {
    const api = await start({ readOnly: true });
    const before = await api.snapshot();
    expectJson(await api.put('/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1')), 405, REFUSED);
    expectJson(await api.put('/meshes/m-1', { type: 'Mesh', name: 'm-1' }), 405, REFUSED);
    expect(await api.snapshot()).toEqual(before);
  });

  it('refuses DELETE with 405 and keeps the resource', async () => {
    const api = await start({ readOnly: true });
    expectJson(await api.del('/meshes/default/traffic-routes/route-all-default'), 405, REFUSED);
    expect((await api.get('/meshes/default/traffic-routes/route-all-default')).status).toBe(200);
  });

  it('refuses a write before looking at its body', async () => {
    const api = await start({ readOnly: true });
    expectJson(await api.request('PUT', '/meshes/default/traffic-routes/tr-1', { raw: 'not json' }), 405, REFUSED);
    expectJson(await api.del('/meshes/default/traffic-routes/missing'), 405, REFUSED);
  });

  it('still serves reads', async () => {
    const api = await start({ readOnly: true });
    expect((await api.get('/meshes/default/traffic-routes')).body.total).toBe(1);
    expect((await api.get('/meshes/default')).status).toBe(200);
  });
});

describe('a zone control plane', () => {
  const zone = { mode: 'zone', zoneName: 'zone-1' } as const;

  it.each([
    ['a Mesh', '/meshes/m-1', { type: 'Mesh', name: 'm-1' }],
    ['a policy', '/meshes/default/traffic-routes/tr-1', trafficRoute('tr-1')],
    ['a Secret', '/meshes/default/secrets/s-1', secret('s-1', 'hush')],
    ['a GlobalSecret', '/global-secrets/gs-1', { type: 'Secret', name: 'gs-1', data: 'eA==' }],
    ['an ExternalService', '/meshes/default/external-services/es-1', { type: 'ExternalService', mesh: 'default', name: 'es-1', networking: { address: 'a.com:443' }, tags: { 'mesh.io/service': 'a' } }],
    ['a Zone', '/zones/zone-2', { type: 'Zone', name: 'zone-2' }],
  ])('refuses to write %s with 405', async (_what, path, body) => {
    const api = await start(zone);
    const before = await api.snapshot();
    expectJson(await api.put(path, body), 405, REFUSED);
    expect(await api.snapshot()).toEqual(before);
  });

  it('refuses to delete a mesh with 405', async () => {
    const api = await start(zone);
    expectJson(await api.del('/meshes/default'), 405, REFUSED);
  });

  it('accepts a Dataplane', async () => {
    const api = await start(zone);
    expectJson(await api.put('/meshes/default/dataplanes/dp-1', dataplane('dp-1')), 201, {});
    expectJson(await api.del('/meshes/default/dataplanes/dp-1'), 200, {});
  });

  it('accepts a ZoneIngress and a ZoneEgress', async () => {
    const api = await start(zone);
    expectJson(await api.put('/zone-ingresses/zi-1', zoneIngress), 201, {});
    expectJson(await api.put('/zoneegresses/ze-1', zoneEgress), 201, {});
  });

  it('refuses a name too long once prefixed with the zone name', async () => {
    const api = await start(zone);
    const name = 'a'.repeat(253 - 'zone-1.'.length);
    expectJson(
      await api.put(`/meshes/default/dataplanes/${name}`, dataplane(name)),
      400,
      stdError(400, 'Could not process a resource', 'Resource is not valid', [['name', 'the length of the name must be shorter']]),
    );
    const fits = name.slice(1);
    expect((await api.put(`/meshes/default/dataplanes/${fits}`, dataplane(fits))).status).toBe(201);
  });
});

describe('a global control plane', () => {
  it('refuses a Dataplane with 405', async () => {
    const api = await start({ mode: 'global' });
    expectJson(await api.put('/meshes/default/dataplanes/dp-1', dataplane('dp-1')), 405, REFUSED);
  });

  it('refuses a ZoneEgress with 405', async () => {
    const api = await start({ mode: 'global' });
    expectJson(await api.put('/zoneegresses/ze-1', zoneEgress), 405, REFUSED);
  });

  it('accepts meshes, policies, zones and zone ingresses', async () => {
    const api = await start({ mode: 'global' });
    expectJson(await api.put('/meshes/m-1', { type: 'Mesh', name: 'm-1' }), 201, {});
    expectJson(await api.put('/meshes/m-1/traffic-routes/tr-1', trafficRoute('tr-1', 'm-1')), 201, {});
    expectJson(await api.put('/zones/zone-1', { type: 'Zone', name: 'zone-1' }), 201, {});
    expectJson(await api.put('/zone-ingresses/zi-1', zoneIngress), 201, {});
  });
});
