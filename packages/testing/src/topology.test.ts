// Topologies of real control plane processes: on each store, with zone ingresses on real Envoy,
// and one whose zone cannot start. The README's example is a test file of its own, kept equal to
// the README here.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPostgresBinaries } from '@mesh/store-postgres/testing';
import { describe, expect, it } from 'vitest';
import { freeBasePort } from './process.js';
import { startTopology, type Topology, type TopologyControlPlane } from './topology.js';

const here = dirname(fileURLToPath(import.meta.url));

const get = async (cp: TopologyControlPlane, path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${cp.api}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as any };
};

const hasEnvoy = (process.env.PATH ?? '').split(':').some((dir) => existsSync(join(dir, 'envoy')));

/** Runs `check` on a topology started with these options, stopping it whatever happens. */
async function withTopology(options: Parameters<typeof startTopology>[0], check: (topology: Topology) => Promise<void>): Promise<Topology> {
  const topology = await startTopology(options);
  try {
    await check(topology);
  } finally {
    await topology.stop();
  }
  return topology;
}

describe('startTopology', () => {
  it('starts a global and two zones on SQLite, connected, with their addresses and tokens, and stops them all', async () => {
    const topology = await withTopology({ zones: 2 }, async ({ global, zones }) => {
      expect(zones.map((zone) => zone.name)).toEqual(['zone-1', 'zone-2']);
      const statuses = (await get(global, '/status/zones')).body as Array<{ name: string; active: boolean }>;
      expect(statuses.map(({ name, active }) => ({ name, active }))).toEqual([
        { name: 'zone-1', active: true },
        { name: 'zone-2', active: true },
      ]);
      expect(global.kds).toBe(`grpcs://127.0.0.1:${global.ports.kds}`);
      expect((await fetch(`${global.diagnostics}/ready`)).status).toBe(200);
      for (const cp of [global, ...zones]) {
        expect((await get(cp, '/config')).body.store.type).toBe('sqlite');
        expect(existsSync(join(cp.workDir, 'mesh.db'))).toBe(true);
        expect((await get(cp, '/who-am-i', { authorization: `Bearer ${cp.adminToken}` })).body).toMatchObject({ name: 'mesh-system:admin' });
      }
      for (const zone of zones) {
        expect((await get(zone, '/config')).body.multizone.zone).toMatchObject({ name: zone.name, globalAddress: global.kds });
        expect(zone.dpServer).toBe(`https://127.0.0.1:${zone.ports.dp}`);
        expect(zone.zoneToken).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
        // A proxy's token from the zone, which its data plane server takes.
        await expect.poll(() => zone.dataplaneToken({ name: 'web-1' }).catch((error: Error) => error.message), { timeout: 30_000 }).toMatch(/^eyJ/);
      }
    });
    for (const cp of [topology.global, ...topology.zones]) {
      expect(cp.pid).toBeUndefined();
      await expect(fetch(`${cp.api}/`)).rejects.toThrow();
    }
    expect(existsSync(topology.dir)).toBe(false);
  }, 300_000);

  it('keeps each control plane in memory', async () => {
    await withTopology({ zones: 1, store: 'memory' }, async ({ global, zones }) => {
      for (const cp of [global, ...zones]) {
        expect((await get(cp, '/config')).body.store.type).toBe('memory');
        expect(existsSync(join(cp.workDir, 'mesh.db'))).toBe(false);
      }
    });
  }, 300_000);

  it.skipIf(!findPostgresBinaries())('keeps each control plane in a database of its own on one PostgreSQL server', async () => {
    const topology = await withTopology({ zones: 1, store: 'postgres' }, async ({ global, zones, postgres }) => {
      const stores = await Promise.all([global, ...zones].map(async (cp) => (await get(cp, '/config')).body.store));
      expect(stores.map((store) => [store.type, store.postgres.port])).toEqual([
        ['postgres', postgres!.port],
        ['postgres', postgres!.port],
      ]);
      expect(new Set(stores.map((store) => store.postgres.dbName)).size).toBe(2);
    });
    await expect(topology.postgres!.createDatabase()).rejects.toThrow();
  }, 300_000);

  it.skipIf(!hasEnvoy)('runs a zone ingress in each zone, which the other zone holds', async () => {
    await withTopology({ zones: 2, ingress: true }, async ({ zones }) => {
      const [zone1, zone2] = zones;
      for (const zone of zones) {
        expect(zone.ingress!.port).toBeGreaterThan(0);
        expect((await fetch(`http://127.0.0.1:${zone.ingress!.adminPort}/ready`)).status).toBe(200);
      }
      await expect.poll(async () => (await get(zone1!, '/zone-ingresses/zone-2.ingress')).status, { timeout: 60_000 }).toBe(200);
      expect((await get(zone2!, '/zone-ingresses/zone-1.ingress')).body.networking).toMatchObject({ advertisedAddress: '127.0.0.1', advertisedPort: zone1!.ingress!.port });
    });
  }, 300_000);

  it('runs a control plane with the Node options given for it: a CPU profile of one zone', async () => {
    const profiles = mkdtempSync(join(tmpdir(), 'mesh-topology-profiles-'));
    try {
      await withTopology({ zones: 2, store: 'memory', nodeOptions: (name) => (name === 'zone-2' ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []) }, async ({ zones }) => {
        expect((await get(zones[1]!, '/config')).body.multizone.zone.name).toBe('zone-2');
      });
      // Written as the zone exited, one a thread of its process (CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile); the global and zone-1 ran without it.
      const written = readdirSync(profiles);
      expect(written.length).toBeGreaterThan(0);
      expect(new Set(written.map((file) => file.split('.')[3])).size).toBe(1);
      for (const file of written) expect(JSON.parse(readFileSync(join(profiles, file), 'utf8')).nodes.length).toBeGreaterThan(0);
    } finally {
      rmSync(profiles, { recursive: true, force: true });
    }
  }, 300_000);

  it('stops what it started and says which zone could not start, and where its log is', async () => {
    // Zone 1's API port, taken: the ports of `basePort` are fixed.
    const squatter = createServer();
    const base = await freeBasePort(1);
    await new Promise<void>((listening) => squatter.listen(base + 101, '0.0.0.0', listening));
    try {
      const started = startTopology({ zones: 1, basePort: base });
      await expect(started).rejects.toThrow(/^zone in .*zone-1 exited with 1; see .*zone-1\.log$/);
      const error = await started.catch((e: Error) => e);
      const log = /see (.*)$/.exec((error as Error).message)![1]!;
      expect(readFileSync(log, 'utf8')).toContain(`apiServer.http.port (MESH_API_SERVER_HTTP_PORT): port ${base + 101} on 0.0.0.0 is already in use`);
      // The global was stopped.
      await expect(fetch(`http://127.0.0.1:${base + 1}/`)).rejects.toThrow();
    } finally {
      squatter.close();
    }
  }, 300_000);

  it("is shown by the README's example, which is a test file of this package", () => {
    const readme = readFileSync(join(here, '..', 'README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBe(readFileSync(join(here, 'readme-example.test.ts'), 'utf8'));
  });
});
