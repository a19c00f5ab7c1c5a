import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTopology, type Topology } from '@mesh/testing';

let topology: Topology;

beforeAll(async () => {
  // A global and two zones, each a process on its own SQLite file; ready once both zones are connected.
  topology = await startTopology({ zones: 2, store: 'sqlite' });
}, 300_000);

afterAll(() => topology?.stop());

it('sends a policy applied on the global to both zones', async () => {
  const timeout = {
    type: 'MeshTimeout',
    mesh: 'default',
    name: 'fast-connect',
    spec: { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { connectionTimeout: '2s' } }] },
  };
  const applied = await fetch(`${topology.global.api}/meshes/default/meshtimeouts/fast-connect`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${topology.global.adminToken}` },
    body: JSON.stringify(timeout),
  });
  expect(applied.status).toBe(201);

  for (const zone of topology.zones) {
    // Sync takes a moment: poll each zone until the policy is there, labelled as the global's.
    await expect
      .poll(async () => {
        const res = await fetch(`${zone.api}/meshes/default/meshtimeouts/fast-connect`);
        return res.ok ? ((await res.json()) as { labels?: Record<string, string> }).labels : res.status;
      }, { timeout: 30_000 })
      .toEqual({ 'mesh.io/origin': 'global' });
  }
});
