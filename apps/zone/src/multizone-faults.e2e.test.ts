// End to end: zone sync under faults, with the built binaries: a zone killed in the middle of its
// first sync, and a zone frozen (SIGSTOP) for longer than the keep-alive. Every zone converges,
// `/status/zones` tells the truth throughout, nothing is duplicated.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, zoneOf, type ControlPlaneProcess, type Ports } from './testing/process.js';

type Started = ControlPlaneProcess & { ports: Ports };

let global: Started;
const started: Started[] = [];

const json = { 'content-type': 'application/json' };
const put = (cp: Started, path: string, body: unknown) => fetch(`${cp.url}${path}`, { method: 'PUT', headers: json, body: JSON.stringify(body) });
const get = async (cp: Started, path: string) => (await fetch(`${cp.url}${path}`)).json() as Promise<any>;

async function eventually(check: () => Promise<void>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

const ALL = [{ match: { 'mesh.io/service': '*' } }];
const route = (name: string) => ({ type: 'TrafficRoute', mesh: 'default', name, sources: ALL, destinations: ALL, conf: { destination: { 'mesh.io/service': name } } });
const activeOf = async (zone: string) => ((await get(global, '/status/zones')) as Array<{ name: string; active: boolean }>).find((z) => z.name === zone)?.active;
const openSubscriptions = async (zone: string) =>
  ((await get(global, `/zones+insights/${zone}`)).zoneInsight.subscriptions as Array<{ disconnectTime?: string }>).filter((s) => s.disconnectTime === undefined).length;
const routeNames = async (cp: Started) => ((await get(cp, '/meshes/default/traffic-routes?size=0')).items as Array<{ name: string }>).map((r) => r.name);

beforeAll(async () => {
  // A small message limit: the meshes of a first sync go in a message before the routes' (docs/multizone.md, Messages and cursors).
  global = await startControlPlane({ binary: 'mesh-global', env: { MESH_MULTIZONE_GLOBAL_KDS_MAX_MSG_SIZE: '65536' } });
  started.push(global);
  // Enough routes that a zone's first sync takes a while.
  const names = Array.from({ length: 1500 }, (_, i) => `r-${String(i).padStart(4, '0')}`);
  for (let i = 0; i < names.length; i += 50) await Promise.all(names.slice(i, i + 50).map((name) => put(global, `/meshes/default/traffic-routes/${name}`, route(name))));
}, 120_000);

afterAll(async () => {
  await Promise.all(started.map((cp) => cp.stop('SIGKILL')));
});

describe('zone sync under faults', () => {
  it('a zone killed in the middle of its first sync converges after a restart, with nothing duplicated', async () => {
    const first = await startControlPlane({ env: zoneOf(global, 'zone-1'), waitUntilReady: false });
    started.push(first);
    // Meshes come first: the routes are still on their way.
    await eventually(async () => expect((await fetch(`${first.url}/meshes/default`)).status).toBe(200), 30_000);
    await first.stop('SIGKILL');
    const zone = await startControlPlane({ workDir: first.workDir, ports: first.ports, env: first.env });
    started.push(zone);
    await eventually(async () => expect(await routeNames(zone)).toEqual(await routeNames(global)), 30_000);
    await eventually(async () => expect(await activeOf('zone-1')).toBe(true), 10_000);
    expect(await openSubscriptions('zone-1')).toBe(1);
  }, 90_000);

  it('a zone frozen past the keep-alive shows inactive, then catches up when it resumes', async () => {
    const zone = await startControlPlane({ env: zoneOf(global, 'zone-2') });
    started.push(zone);
    await eventually(async () => expect(await activeOf('zone-2')).toBe(true), 10_000);
    process.kill(zone.pid, 'SIGSTOP');
    try {
      // The global pings after 15 s of silence and drops a connection that does not answer within 15 s more.
      await eventually(async () => expect(await activeOf('zone-2')).toBe(false), 60_000);
      expect((await put(global, '/meshes/default/traffic-routes/while-frozen', route('while-frozen'))).status).toBe(201);
    } finally {
      process.kill(zone.pid, 'SIGCONT');
    }
    await eventually(async () => expect(await activeOf('zone-2')).toBe(true), 30_000);
    await eventually(async () => expect(await routeNames(zone)).toEqual(await routeNames(global)), 30_000);
    expect(await openSubscriptions('zone-2')).toBe(1);
  }, 150_000);
});
