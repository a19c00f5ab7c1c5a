// End to end: crash safety of the built zone binary on SQLite. Several writers create, update and
// delete dataplanes and policies through the API (and a new mesh now and then) while the process
// is killed with SIGKILL at random moments, then restarted on the same data. Every acknowledged
// write is there with its last acknowledged value (a write in flight when killed may or may not
// be), every stored resource decodes and validates, derived records agree with the resources
// (mesh defaults, insights, the change log), and the revisions have no gap or repeat.
import { join } from 'node:path';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlaneProcess, type Ports } from './testing/process.js';

type Started = ControlPlaneProcess & { ports: Ports };

const CYCLES = 4;
const WRITERS = 4;
const MESH = 'crash';
const ALL = [{ match: { 'mesh.io/service': '*' } }];

/** What a key holds: the `seq` label of its last write, or null once deleted. */
type Value = string | null;

interface KeyState {
  /** The last state the server acknowledged; undefined until anything was. */
  acked: Value | undefined;
  /** A write that got no answer before the kill: the key may hold it or `acked`. */
  inFlight?: Value;
}

/** A resource a writer owns, and the body of a write with its `seq` label. */
interface Target {
  path: string;
  body: (seq: string) => unknown;
  /** A mesh is deleted only while it holds no dataplane; its writers keep none in it. */
  isMesh?: boolean;
}

const dataplane = (name: string, i: number) => (seq: string) => ({
  type: 'Dataplane',
  mesh: MESH,
  name,
  labels: { seq },
  networking: { address: `10.0.${i}.${Number(seq.split('.')[1]) % 250}`, inbound: [{ port: 8080, tags: { 'mesh.io/service': `svc-${i}` } }] },
});
const trafficRoute = (name: string) => (seq: string) => ({
  type: 'TrafficRoute',
  mesh: MESH,
  name,
  labels: { seq },
  sources: ALL,
  destinations: ALL,
  conf: { destination: { 'mesh.io/service': `to-${seq.replace('.', '-')}` } },
});
const meshTimeout = (name: string) => (seq: string) => ({
  type: 'MeshTimeout',
  mesh: MESH,
  name,
  labels: { seq },
  spec: { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { connectionTimeout: `${Number(seq.split('.')[1]) % 60 + 1}s` } }] },
});
const mesh = (name: string) => (seq: string) => ({ type: 'Mesh', name, labels: { seq } });

/** Each writer owns its keys, so the last acknowledged value of each is well defined. */
function targetsOf(writer: number): Target[] {
  const targets: Target[] = [];
  for (let i = 0; i < 3; i++) {
    targets.push({ path: `/meshes/${MESH}/dataplanes/dp-${writer}-${i}`, body: dataplane(`dp-${writer}-${i}`, writer * 3 + i) });
    targets.push({ path: `/meshes/${MESH}/traffic-routes/tr-${writer}-${i}`, body: trafficRoute(`tr-${writer}-${i}`) });
    targets.push({ path: `/meshes/${MESH}/meshtimeouts/mt-${writer}-${i}`, body: meshTimeout(`mt-${writer}-${i}`) });
  }
  for (let i = 0; i < 2; i++) targets.push({ path: `/meshes/m-${writer}-${i}`, body: mesh(`m-${writer}-${i}`), isMesh: true });
  return targets;
}

const json = { 'content-type': 'application/json' };
const states = new Map<string, KeyState>();
let cp: Started;

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${cp.url}${path}`);
  return { status: res.status, body: await res.json() };
}

/** Writes as fast as it can until the process dies under it. */
async function write(writer: number, counter: { n: number }): Promise<void> {
  const targets = targetsOf(writer);
  for (;;) {
    const target = targets[Math.floor(Math.random() * targets.length)]!;
    // Meshes change less often than the rest: a new mesh now and then.
    if (target.isMesh && Math.random() < 0.7) continue;
    const remove = Math.random() < 0.25;
    const seq = `${writer}.${counter.n++}`;
    const state = states.get(target.path) ?? { acked: undefined };
    states.set(target.path, state);
    const value: Value = remove ? null : seq;
    state.inFlight = value;
    let status: number;
    try {
      const res = await fetch(`${cp.url}${target.path}`, remove ? { method: 'DELETE' } : { method: 'PUT', headers: json, body: JSON.stringify(target.body(seq)) });
      status = res.status;
      await res.arrayBuffer();
    } catch {
      return;
    }
    delete state.inFlight;
    if (status === 200 || status === 201) state.acked = value;
    else if (status === 404 && remove) state.acked = null;
    else throw new Error(`${remove ? 'DELETE' : 'PUT'} ${target.path}: unexpected ${status}`);
  }
}

/** The stopped binary's database: every row decodes, and the change log numbers every change once, in order, agreeing with the rows. */
async function checkDatabase(workDir: string): Promise<number> {
  const store = new SqliteResourceStore({ path: join(workDir, 'mesh.db') });
  try {
    const latest = await store.currentRevision();
    const log = await store.changesSince(0, Number.MAX_SAFE_INTEGER);
    if (log.resync) throw new Error('the change log was pruned: the test writes fewer changes than the store keeps');
    expect(log.changes.map((change) => change.revision)).toEqual(Array.from({ length: latest }, (_, i) => i + 1));
    // The last change of each key says whether it is stored.
    const lastChange = new Map<string, string>();
    for (const change of log.changes) lastChange.set(`${change.type}|${change.mesh}|${change.name}`, change.operation);
    const types = new Set(log.changes.map((change) => change.type));
    for (const type of types) {
      for (const resource of (await store.list({ type, offset: 0, size: 0 })).items) {
        expect(() => JSON.parse(resource.spec), `${type} ${resource.mesh}/${resource.name}`).not.toThrow();
        expect(lastChange.get(`${type}|${resource.mesh}|${resource.name}`), `${type} ${resource.mesh}/${resource.name}`).not.toBe('delete');
        lastChange.delete(`${type}|${resource.mesh}|${resource.name}`);
      }
    }
    for (const [key, operation] of lastChange) expect(operation, `${key} is in the change log but not stored`).toBe('delete');
    return latest;
  } finally {
    await store.close();
  }
}

/** Every key holds its last acknowledged value, or the write that was in flight. */
async function checkAcknowledged(): Promise<void> {
  for (const [path, state] of states) {
    const read = await get(path);
    const found: Value = read.status === 404 ? null : read.body.labels?.seq;
    if (read.status !== 404) expect(read.status, path).toBe(200);
    const allowed = [state.acked === undefined ? null : state.acked, ...('inFlight' in state ? [state.inFlight] : [])];
    expect(allowed, `${path} holds ${String(found)}`).toContain(found);
    // From here on, what is stored is what was acknowledged.
    states.set(path, { acked: found });
  }
}

const DEFAULTS = ['traffic-permissions/allow-all', 'traffic-routes/route-all', 'timeouts/timeout-all', 'circuit-breakers/circuit-breaker-all', 'retries/retry-all'];

/** Each mesh has its defaults, and its insight counts what is stored. */
async function checkDerived(): Promise<void> {
  const meshes = (await get('/meshes?size=1000')).body.items.map((m: { name: string }) => m.name) as string[];
  for (const name of meshes) {
    for (const policy of DEFAULTS) expect((await get(`/meshes/${name}/${policy}-${name}`)).status, `${policy}-${name}`).toBe(200);
    expect((await get(`/meshes/${name}/secrets/dataplane-token-signing-key-${name}-1`)).status, `signing key of ${name}`).toBe(200);
    const insight = (await get(`/mesh-insights/${name}`)).body;
    expect(insight.dataplanes.total ?? 0, `dataplanes of ${name}`).toBe((await get(`/meshes/${name}/dataplanes?size=0`)).body.total);
    expect(insight.policies.TrafficRoute?.total ?? 0, `traffic routes of ${name}`).toBe((await get(`/meshes/${name}/traffic-routes?size=0`)).body.total);
    expect(insight.policies.MeshTimeout?.total ?? 0, `mesh timeouts of ${name}`).toBe((await get(`/meshes/${name}/meshtimeouts?size=0`)).body.total);
  }
  expect((await get('/mesh-insights?size=1000')).body.items.map((m: { name: string }) => m.name)).toEqual(meshes);
}

afterAll(async () => {
  await cp?.stop('SIGKILL');
});

describe('crash safety', () => {
  it(`keeps every acknowledged write through ${CYCLES} kills in the middle of writing`, async () => {
    cp = await startControlPlane();
    expect((await fetch(`${cp.url}/meshes/${MESH}`, { method: 'PUT', headers: json, body: JSON.stringify({ type: 'Mesh', name: MESH }) })).status).toBe(201);
    let revision = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const counters = Array.from({ length: WRITERS }, () => ({ n: 0 }));
      const writers = counters.map((counter, writer) => write(writer, counter));
      // Killed at a random moment once writing is well under way.
      await new Promise((resolve) => setTimeout(resolve, 400 + Math.random() * 1200));
      await cp.stop('SIGKILL');
      await Promise.all(writers);
      const sent = counters.reduce((sum, c) => sum + c.n, 0);
      expect(sent).toBeGreaterThan(WRITERS);
      const inFlight = [...states.values()].filter((state) => 'inFlight' in state).length;

      const latest = await checkDatabase(cp.workDir);
      expect(latest).toBeGreaterThan(revision);
      console.info(`cycle ${cycle + 1}: ${sent} writes sent, ${inFlight} in flight when killed, revisions ${revision + 1}-${latest}`);
      revision = latest;

      cp = await startControlPlane({ workDir: cp.workDir, ports: cp.ports, env: cp.env });
      await checkAcknowledged();
      await checkDerived();
    }

    // Every stored resource the writers touched validates: written back as read, each is accepted.
    for (const path of ['/meshes', `/meshes/${MESH}/dataplanes`, `/meshes/${MESH}/traffic-routes`, `/meshes/${MESH}/meshtimeouts`]) {
      for (const item of (await get(`${path}?size=1000`)).body.items as Array<Record<string, unknown>>) {
        const { creationTime: _created, modificationTime: _modified, ...body } = item;
        const itemPath = item.type === 'Mesh' ? `/meshes/${String(item.name)}` : `${path}/${String(item.name)}`;
        const res = await fetch(`${cp.url}${itemPath}`, { method: 'PUT', headers: json, body: JSON.stringify(body) });
        expect(res.status, `${itemPath}: ${await res.text()}`).toBe(200);
      }
    }
  }, 120_000);
});
