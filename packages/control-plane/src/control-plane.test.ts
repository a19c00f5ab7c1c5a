// Embedding: a program starts control planes in its own process with startControlPlane, on real
// SQLite files and free ports, and talks to them over their API as any client would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, type ControlPlaneSettings } from './config.js';
import { startControlPlane, type RunningControlPlane } from './control-plane.js';

const dirs: string[] = [];
const running: RunningControlPlane[] = [];
afterAll(async () => {
  await Promise.all(running.map((cp) => cp.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-embedded-'));
  dirs.push(dir);
  return dir;
}

/** Every server of a control plane on a port the system chooses. */
const onFreePorts = (dir: string): ControlPlaneSettings => ({
  general: { workDir: dir },
  apiServer: { http: { port: 0 }, https: { port: 0 } },
  diagnostics: { serverPort: 0 },
  dpServer: { port: 0 },
  monitoringAssignmentServer: { port: 0 },
  multizone: { global: { kds: { grpcPort: 0 } } },
});

async function start(settings: ControlPlaneSettings): Promise<RunningControlPlane> {
  const cp = await startControlPlane(settings);
  running.push(cp);
  return cp;
}

async function stop(cp: RunningControlPlane): Promise<void> {
  await cp.stop();
  running.splice(running.indexOf(cp), 1);
}

/** Reads until the check passes; the test's timeout ends a wait that never does. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const MESH = { type: 'Mesh', name: 'shop' };

describe('startControlPlane', () => {
  it('runs a standalone control plane whose SQLite file keeps what was written across a restart', async () => {
    const dir = workDir();
    const first = await start(onFreePorts(dir));
    expect(first.config.mode).toBe('standalone');
    expect(first.config.store.sqlite.path).toBe(join(dir, 'mesh.db'));
    expect(first.ports.http).toBeGreaterThan(0);
    expect(first.addresses).toEqual({
      api: `http://127.0.0.1:${first.ports.http}`,
      apiHttps: `https://127.0.0.1:${first.ports.https}`,
      diagnostics: `http://127.0.0.1:${first.ports.diagnostics}`,
      dpServer: `https://127.0.0.1:${first.ports.dp}`,
    });
    expect((await fetch(`${first.addresses.diagnostics}/ready`)).status).toBe(200);
    const created = await fetch(`${first.addresses.api}/meshes/shop`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(MESH) });
    expect(created.status).toBe(201);
    await stop(first);
    await expect(fetch(`${first.addresses.api}/meshes/shop`)).rejects.toThrow();

    const second = await start(onFreePorts(dir));
    const read = await fetch(`${second.addresses.api}/meshes/shop`);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject(MESH);
  });

  it('refuses settings as the binaries refuse a configuration file, starting nothing', async () => {
    const dir = workDir();
    await expect(startControlPlane({ ...onFreePorts(dir), apiServer: { http: { port: 70000 } } })).rejects.toThrow(
      new ConfigError('port must be in the range [0, 65535], got 70000', 'apiServer.http.port'),
    );
    await expect(startControlPlane({ mode: 'zone', general: { workDir: dir } })).rejects.toThrow('multizone.zone.name (MESH_MULTIZONE_ZONE_NAME): a zone control plane needs a zone name');
    await expect(startControlPlane({ apiServer: { htpp: { port: 0 } } } as ControlPlaneSettings)).rejects.toThrow('apiServer.htpp: unknown configuration key');
    await expect(startControlPlane({ store: { type: 'mongo' } })).rejects.toBeInstanceOf(ConfigError);
  });

  it('runs a global and a zone in one process, the zone connected to the global', async () => {
    const globalDir = workDir();
    const global = await start({ ...onFreePorts(globalDir), mode: 'global' });
    expect(global.addresses.kds).toBe(`grpcs://127.0.0.1:${global.ports.kds}`);
    expect(global.addresses.dpServer).toBeUndefined();

    const zone = await start({
      ...onFreePorts(workDir()),
      mode: 'zone',
      multizone: { zone: { name: 'zone-1', globalAddress: global.addresses.kds!, kds: { rootCaFile: join(globalDir, 'mesh-cp.crt') } } },
    });
    expect(zone.addresses.kds).toBeUndefined();
    const zones = await eventually(
      async () => (await (await fetch(`${global.addresses.api}/status/zones`)).json()) as Array<{ name: string; active: boolean }>,
      (list) => list.some((z) => z.active),
    );
    expect(zones.map(({ name, active }) => ({ name, active }))).toEqual([{ name: 'zone-1', active: true }]);

    const created = await fetch(`${global.addresses.api}/meshes/shop`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(MESH) });
    expect(created.status).toBe(201);
    const synced = await eventually(
      () => fetch(`${zone.addresses.api}/meshes/shop`),
      (res) => res.status === 200,
    );
    expect(((await synced.json()) as { labels?: unknown }).labels).toEqual({ 'mesh.io/origin': 'global' });
  });
});
