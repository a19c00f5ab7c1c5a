// Several zone control-plane instances behind one PostgreSQL: shared writes, change events across
// instances, leader election and hand-over, and a database lost and found again. Real binaries,
// real PostgreSQL (skipped outside CI when its server binaries are not installed).
import { findPostgresBinaries, startPostgresServer, type PostgresServer } from '@mesh/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlaneProcess } from './testing/process.js';

const available = findPostgresBinaries() !== undefined;
if (!available && process.env.CI) throw new Error('PostgreSQL server binaries are required in CI (.ci/run installs them)');

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const route = (name: string, service = '*') => ({
  type: 'TrafficRoute',
  mesh: 'default',
  name,
  sources: [{ match: { 'mesh.io/service': service } }],
  destinations: [{ match: { 'mesh.io/service': '*' } }],
  conf: { destination: { 'mesh.io/service': '*' } },
});

const put = (cp: ControlPlaneProcess, path: string, body: unknown) =>
  fetch(`${cp.url}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const getJson = async (cp: ControlPlaneProcess, path: string) => {
  const res = await fetch(`${cp.url}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const leads = (cp: ControlPlaneProcess) => /"leader":true/.test(cp.output());

describe.skipIf(!available)('zone control planes on one PostgreSQL', () => {
  let server: PostgresServer;
  let env: Record<string, string>;
  const instances: Instance[] = [];
  let survivor: Instance;
  const start = async () => {
    const instance = await startControlPlane({ env });
    instances.push(instance);
    return instance;
  };

  beforeAll(async () => {
    server = await startPostgresServer();
    env = {
      MESH_STORE_TYPE: 'postgres',
      MESH_STORE_POSTGRES_HOST: server.host,
      MESH_STORE_POSTGRES_PORT: String(server.port),
      MESH_STORE_POSTGRES_USER: server.user,
      MESH_STORE_POSTGRES_PASSWORD: '',
      MESH_STORE_POSTGRES_DB_NAME: await server.createDatabase(),
      MESH_STORE_POSTGRES_MIN_RECONNECT_INTERVAL: '200ms',
      MESH_STORE_POSTGRES_MAX_RECONNECT_INTERVAL: '1s',
    };
  }, 60_000);
  afterAll(async () => {
    await Promise.all(instances.map((cp) => cp.stop('SIGKILL')));
    await server?.stop();
  }, 60_000);

  it('serves a write through one instance from the other, and follows it in the other one insights', async () => {
    const [first, second] = [await start(), await start()];
    const before = (await getJson(second, '/mesh-insights/default')).body as { policies?: Record<string, { total: number }> };
    expect((await put(first, '/meshes/default/traffic-routes/from-first', route('from-first'))).status).toBe(201);
    const read = await waitFor('the write to be readable on the second instance', async () => {
      const got = await getJson(second, '/meshes/default/traffic-routes/from-first');
      return got.status === 200 ? got.body : undefined;
    });
    expect(read).toMatchObject({ name: 'from-first', sources: [{ match: { 'mesh.io/service': '*' } }] });
    const routes = (insight: Record<string, unknown>) => (insight as { policies?: Record<string, { total: number }> }).policies?.TrafficRoute?.total ?? 0;
    await waitFor('the second instance insights to count it', async () => routes((await getJson(second, '/mesh-insights/default')).body) === routes(before) + 1);
    // An update through the second with the version read from the first is not lost: the last write wins in order.
    expect((await put(second, '/meshes/default/traffic-routes/from-first', route('from-first', 'web'))).status).toBe(200);
    await waitFor('the update on the first instance', async () => {
      const got = await getJson(first, '/meshes/default/traffic-routes/from-first');
      return (got.body.sources as Array<{ match: Record<string, string> }>)[0]?.match['mesh.io/service'] === 'web' || undefined;
    });
  }, 60_000);

  it("streams a change written through one instance on the other instance's /events", async () => {
    const [first, second] = instances;
    const aborted = new AbortController();
    const stream = await fetch(`${first!.url}/events?type=TrafficRoute&name=via-second`, { headers: { accept: 'text/event-stream' }, signal: aborted.signal });
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    let received = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of stream.body!) received += decoder.decode(chunk as Uint8Array, { stream: true });
    })().catch(() => {});
    expect((await put(second!, '/meshes/default/traffic-routes/via-second', route('via-second'))).status).toBe(201);
    await waitFor('the change on the first instance stream', () => /event: put\ndata: .*"name":"via-second"/.test(received) || undefined);
    const data = JSON.parse(/data: (.*)\n/.exec(received)![1]!) as { revision: number; resource: Record<string, unknown> };
    expect(received).toContain(`id: ${data.revision}\n`);
    expect(data.resource).toEqual((await getJson(second!, '/meshes/default/traffic-routes/via-second')).body);
    aborted.abort();
    await reading;
  }, 60_000);

  it('elects one leader; when it is killed another instance takes over and nothing acknowledged is lost', async () => {
    const leader = await waitFor('a leader', () => instances.find(leads));
    const follower = instances.find((cp) => cp !== leader)!;
    expect(leads(follower)).toBe(false);
    const acknowledged: string[] = [];
    for (let i = 0; i < 20; i++) {
      const target = i % 2 === 0 ? leader : follower;
      if ((await put(target, `/meshes/default/traffic-routes/r-${i}`, route(`r-${i}`))).status === 201) acknowledged.push(`r-${i}`);
    }
    await leader.stop('SIGKILL');
    const killedAt = Date.now();
    await waitFor('the follower to take over', () => leads(follower) || undefined, 15_000);
    console.log(`leader hand-over after SIGKILL: ${Date.now() - killedAt} ms`);
    const names = ((await getJson(follower, '/meshes/default/traffic-routes?size=1000')).body.items as Array<{ name: string }>).map((r) => r.name);
    for (const name of acknowledged) expect(names).toContain(name);
    survivor = follower;
  }, 60_000);

  it('answers 503 and is not ready while the database is away, and recovers when it returns', async () => {
    const cp = survivor;
    await server.halt();
    const ready = await waitFor('readiness to drop', async () => ((await fetch(`http://127.0.0.1:${cp.ports.diagnostics}/ready`)).status === 503 ? true : undefined));
    expect(ready).toBe(true);
    const refused = await put(cp, '/meshes/default/traffic-routes/while-away', route('while-away'));
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ type: '/std-errors', status: 503, title: 'Service Unavailable' });
    expect((await getJson(cp, '/meshes/default/traffic-routes/r-0')).status).toBe(200);
    await server.start();
    await waitFor('readiness to return', async () => ((await fetch(`http://127.0.0.1:${cp.ports.diagnostics}/ready`)).ok ? true : undefined));
    expect((await put(cp, '/meshes/default/traffic-routes/after-return', route('after-return'))).status).toBe(201);
    expect((await getJson(cp, '/meshes/default/traffic-routes/while-away')).status).toBe(404);
  }, 60_000);
});
