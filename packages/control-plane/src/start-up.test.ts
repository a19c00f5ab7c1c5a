// Start-up on a store that holds a zone's worth of proxies (docs/architecture.md, Start-up): the
// API serves as soon as the store is read, before the insights and proxy configurations are
// computed, and whatever depends on them waits for them rather than answering from half of them.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { ControlPlaneSettings } from './config.js';
import { startControlPlane, type RunningControlPlane } from './control-plane.js';

const DATAPLANES = 2_000;
const MESH = 'default';
const dpName = (i: number) => `dp-${String(i).padStart(4, '0')}`;

const dirs: string[] = [];
const running: RunningControlPlane[] = [];
afterAll(async () => {
  await Promise.all(running.map((cp) => cp.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const settingsFor = (dir: string, http: number, diagnostics: number): ControlPlaneSettings => ({
  general: { workDir: dir },
  apiServer: { http: { port: http }, https: { enabled: false } },
  diagnostics: { serverPort: diagnostics },
  dpServer: { port: 0 },
  monitoringAssignmentServer: { port: 0 },
  multizone: { global: { kds: { grpcPort: 0 } } },
});

const dataplane = (i: number) => ({
  type: 'Dataplane',
  mesh: MESH,
  name: dpName(i),
  networking: {
    address: `10.0.${i >> 8}.${i & 255}`,
    inbound: [{ port: 8080, tags: { 'mesh.io/service': `svc-${i % 20}`, 'mesh.io/protocol': 'http' } }],
    outbound: [{ port: 10001, service: `svc-${(i + 1) % 20}` }],
  },
});

/** Every other dataplane online, as the insights a running control plane had written. */
const insightRows = () =>
  Array.from({ length: DATAPLANES / 2 }, (_, half) => ({
    type: 'DataplaneInsight',
    mesh: MESH,
    name: dpName(half * 2),
    spec: JSON.stringify({ subscriptions: [{ id: `sub-${half}`, controlPlaneInstanceId: 'cp-before', connectTime: '2024-05-06T07:00:00.000Z' }] }),
  }));

async function status(url: string): Promise<number> {
  return fetch(url).then(
    (res) => res.status,
    () => 0,
  );
}

async function json(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A work directory as a control plane left it, its store holding DATAPLANES dataplanes, a policy and half the dataplanes online. */
async function storedZone(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-start-up-'));
  dirs.push(dir);
  const first = await startControlPlane(settingsFor(dir, 0, 0));
  const api = first.addresses.api!;
  const put = async (path: string, body: unknown) => {
    const res = await fetch(`${api}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status, await res.text()).toBe(201);
  };
  for (let next = 0; next < DATAPLANES; next += 20) {
    await Promise.all(Array.from({ length: 20 }, (_, i) => put(`/meshes/${MESH}/dataplanes/${dpName(next + i)}`, dataplane(next + i))));
  }
  await put(`/meshes/${MESH}/timeouts/slow-svc-1`, {
    type: 'Timeout',
    mesh: MESH,
    name: 'slow-svc-1',
    sources: [{ match: { 'mesh.io/service': '*' } }],
    destinations: [{ match: { 'mesh.io/service': 'svc-1' } }],
    conf: { connectTimeout: '7s' },
  });
  await first.stop();
  const store = new SqliteResourceStore({ path: join(dir, 'mesh.db') });
  await store.createMissing(insightRows());
  await store.close();
  return dir;
}

describe('start-up', () => {
  it('serves the API before it is ready, and what the API computes from the insights and proxy configurations is complete', { timeout: 180_000 }, async () => {
    const dir = await storedZone();
    const [http, diagnostics] = [await freePort(), await freePort()];
    const api = `http://127.0.0.1:${http}`;
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const starting = startControlPlane(settingsFor(dir, http, diagnostics), { logger });
    starting.then((cp) => running.push(cp), () => {});

    // In this process the control plane's work and these requests share one event loop: the API
    // answers between the slices of its work.
    while ((await status(`${api}/`)) !== 200) await new Promise((resolve) => setTimeout(resolve, 5));
    let readyWhenServing = 0;
    while (readyWhenServing === 0) readyWhenServing = await status(`http://127.0.0.1:${diagnostics}/ready`);
    const [meshInsight, online, policies] = await Promise.all([
      json(`${api}/mesh-insights/${MESH}`),
      json(`${api}/meshes/${MESH}/dataplanes+insights?status=online&size=1`),
      // A consumer of svc-1, which the Timeout applies to.
      json(`${api}/meshes/${MESH}/dataplanes/${dpName(DATAPLANES - 20)}/policies`),
    ]);
    expect(readyWhenServing).toBe(503);
    expect(meshInsight.status).toBe(200);
    expect((meshInsight.body.dataplanes as { total: number; online: number }).total).toBe(DATAPLANES);
    expect((meshInsight.body.dataplanes as { total: number; online: number }).online).toBe(DATAPLANES / 2);
    expect(online.body.total).toBe(DATAPLANES / 2);
    expect(policies.status).toBe(200);
    expect(JSON.stringify(policies.body)).toContain('slow-svc-1');

    await starting;
    expect(await status(`http://127.0.0.1:${diagnostics}/ready`)).toBe(200);
    // Every proxy's policies are matched before any proxy connects.
    while (!lines.some((line) => line.msg === 'proxy configurations ready')) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines.find((line) => line.msg === 'proxy configurations ready')).toMatchObject({ proxies: DATAPLANES });
  });
});
