// End to end: what each mode accepts. The built mesh-global binary owns meshes, policies, secrets
// and zones and refuses what zones own (data plane proxies, zone egresses); a zone control plane
// refuses what the global owns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, zoneOf } from './testing/process.js';

let global: Awaited<ReturnType<typeof startControlPlane>>;

const put = (path: string, body: unknown) =>
  fetch(`${global.url}${path}`, { method: 'PUT', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

beforeAll(async () => {
  global = await startControlPlane({ binary: 'mesh-global' });
});

afterAll(async () => {
  await global?.stop();
});

describe('mesh-global', () => {
  it('creates the default mesh and accepts meshes, policies, secrets and zones', async () => {
    expect(await (await fetch(`${global.url}/meshes/default`)).json()).toMatchObject({ type: 'Mesh', name: 'default' });
    expect((await put('/zones/east', { type: 'Zone', name: 'east', enabled: true })).status).toBe(201);
    expect((await put('/global-secrets/gs', { type: 'GlobalSecret', name: 'gs', data: 'YQ==' })).status).toBe(201);
    expect(
      (
        await put('/meshes/default/traffic-permissions/tp', {
          type: 'TrafficPermission',
          mesh: 'default',
          name: 'tp',
          sources: [{ match: { 'mesh.io/service': '*' } }],
          destinations: [{ match: { 'mesh.io/service': '*' } }],
        })
      ).status,
    ).toBe(201);
  });

  it('refuses writes of data plane proxies and zone egresses with 405', async () => {
    const dataplane = await put('/meshes/default/dataplanes/dp', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'dp',
      networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] },
    });
    expect(dataplane.status).toBe(405);
    expect(await dataplane.json()).toEqual({ type: '/std-errors', status: 405, title: 'Method not Allowed', detail: 'Method not allowed', details: 'Method not allowed' });
    expect((await put('/zoneegresses/eg', { type: 'ZoneEgress', name: 'eg', networking: { address: '10.0.0.2', port: 10002 } })).status).toBe(405);
    expect((await fetch(`${global.url}/meshes/default/dataplanes`)).status).toBe(200);
  });
});

describe('mesh-zone in zone mode', () => {
  it('creates no mesh of its own, holds the global’s, and refuses meshes, policies, secrets and zones', async () => {
    const zone = await startControlPlane({ env: zoneOf(global, 'east') });
    try {
      const send = (path: string, body: unknown) =>
        fetch(`${zone.url}${path}`, { method: 'PUT', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      const meshes = (await (await fetch(`${zone.url}/meshes`)).json()) as { items: Array<{ name: string; labels: Record<string, string> }> };
      expect(meshes.items.map(({ name, labels }) => ({ name, labels }))).toEqual([{ name: 'default', labels: { 'mesh.io/origin': 'global' } }]);
      expect((await send('/meshes/m', { type: 'Mesh', name: 'm' })).status).toBe(405);
      expect((await send('/zones/west', { type: 'Zone', name: 'west' })).status).toBe(405);
      expect((await send('/global-secrets/s', { type: 'Secret', name: 's', data: 'YQ==' })).status).toBe(405);
      expect((await send('/zoneegresses/eg', { type: 'ZoneEgress', name: 'eg', networking: { address: '10.0.0.2', port: 10002 } })).status).toBe(201);
    } finally {
      await zone.stop();
    }
  });

  it('refuses to start as a zone without a zone name, with a name that is not one DNS label, or without a usable global address', async () => {
    await expect(startControlPlane({ env: { MESH_MODE: 'zone' } })).rejects.toThrow(/zone name/);
    await expect(startControlPlane({ env: { ...zoneOf(global, 'east'), MESH_MULTIZONE_ZONE_NAME: 'east.one' } })).rejects.toThrow(/east.one.{0,4} is not a valid zone name/);
    await expect(startControlPlane({ env: { MESH_MODE: 'zone', MESH_MULTIZONE_ZONE_NAME: 'east' } })).rejects.toThrow(/needs its global's sync address/);
    await expect(startControlPlane({ env: { ...zoneOf(global, 'east'), MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: 'ftp://global:5685' } })).rejects.toThrow(/unsupported scheme .{0,4}ftp/);
  });
});
