import { getKind } from '@mesh/model';
import { afterEach, describe, expect, it } from 'vitest';
import { startApi, stdError, type TestApi, type TestApiOptions } from '../testing.js';
import { EventClient, type ReceivedEvent } from './testing.js';

let api: TestApi;
const clients: EventClient[] = [];

async function start(options: TestApiOptions = {}): Promise<TestApi> {
  api = await startApi(options);
  return api;
}

async function watch(query: string, headers: Record<string, string> = {}): Promise<EventClient> {
  const client = await EventClient.open(`${api.url}/events${query}`, headers);
  clients.push(client);
  return client;
}

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await api?.close();
});

const dataplane = (mesh: string, name: string, service = 'web') => ({
  type: 'Dataplane',
  mesh,
  name,
  networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': service } }] },
});

async function putDataplane(mesh: string, name: string, service = 'web'): Promise<void> {
  expect((await api.put(`/meshes/${mesh}/dataplanes/${name}`, dataplane(mesh, name, service))).status).toBeLessThan(300);
}

/** `put default/dp-1` or `delete default/dp-1`, with the type when asked. */
const brief = (events: ReceivedEvent[], withType = false) =>
  events.filter((e) => e.event === 'put' || e.event === 'delete').map((e) => `${e.event} ${withType ? `${e.data.type} ` : ''}${e.data.mesh ?? ''}/${e.data.name}`);

describe('GET /events', () => {
  it('sends the current state, then synced, then each matching change with what GET answers', async () => {
    await start();
    expect((await api.put('/meshes/other', { type: 'Mesh', name: 'other' })).status).toBe(201);
    await putDataplane('default', 'dp-1');
    await putDataplane('default', 'dp-2');
    await putDataplane('other', 'dp-1');
    const client = await watch('?type=Dataplane&mesh=default&initial=true');
    expect([client.status, client.headers['content-type']]).toEqual([200, 'text/event-stream; charset=utf-8']);
    await client.until((c) => c.ofType('synced').length === 1);
    expect(brief(client.events)).toEqual(['put default/dp-1', 'put default/dp-2']);
    const synced = client.events.at(-1)!;
    expect(synced.id).toBe(String(synced.data.revision));
    expect(client.events[0]!.data.resource).toEqual((await api.get('/meshes/default/dataplanes/dp-1')).body);

    await putDataplane('other', 'dp-3');
    await putDataplane('default', 'dp-3', 'api');
    expect((await api.put('/meshes/default/traffic-permissions/tp', { type: 'TrafficPermission', mesh: 'default', name: 'tp', sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }] })).status).toBe(201);
    expect((await api.del('/meshes/default/dataplanes/dp-1')).status).toBe(200);
    await client.until((c) => c.ofType('delete').length === 1);
    const changes = client.events.slice(client.events.indexOf(synced) + 1);
    expect(brief(changes)).toEqual(['put default/dp-3', 'delete default/dp-1']);
    expect(changes[0]!.data.resource).toEqual((await api.get('/meshes/default/dataplanes/dp-3')).body);
    expect(changes[1]!.data).toEqual({ revision: Number(changes[1]!.id), type: 'Dataplane', mesh: 'default', name: 'dp-1' });
    expect(Number(changes[1]!.id)).toBeGreaterThan(Number(changes[0]!.id));
    expect(Number(changes[0]!.id)).toBeGreaterThan(synced.data.revision);
  });

  it('filters by name, and by several types at once', async () => {
    await start();
    const client = await watch('?type=Dataplane&type=TrafficPermission&name=dp-2&name=tp');
    await putDataplane('default', 'dp-1');
    await putDataplane('default', 'dp-2');
    expect((await api.put('/meshes/default/traffic-permissions/tp', { type: 'TrafficPermission', mesh: 'default', name: 'tp', sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }] })).status).toBe(201);
    await client.until((c) => c.events.length === 2);
    expect(brief(client.events, true)).toEqual(['put Dataplane default/dp-2', 'put TrafficPermission default/tp']);
  });

  it('sends mesh and service insights as GET answers them, and a service that goes as a delete', async () => {
    await start();
    const client = await watch('?type=MeshInsight&type=ServiceInsight');
    await putDataplane('default', 'dp-1', 'web');
    await client.until((c) => c.events.some((e) => e.data.type === 'ServiceInsight'));
    const meshInsight = client.events.filter((e) => e.data.type === 'MeshInsight').at(-1)!;
    expect(meshInsight.data.resource).toEqual((await api.get('/mesh-insights/default')).body);
    expect(meshInsight.data.mesh).toBeUndefined();
    const serviceInsight = client.events.find((e) => e.data.type === 'ServiceInsight')!;
    expect(serviceInsight.data).toMatchObject({ mesh: 'default', name: 'web' });
    expect(serviceInsight.data.resource).toEqual((await api.get('/meshes/default/service-insights/web')).body);

    await putDataplane('default', 'dp-1', 'api');
    await client.until((c) => c.ofType('delete').length === 1);
    expect(client.ofType('delete')[0]!.data).toMatchObject({ type: 'ServiceInsight', mesh: 'default', name: 'web' });
    await client.until((c) => c.events.some((e) => e.data.name === 'api'));
  });

  it('resumes after Last-Event-ID or since with every change made meanwhile, in order, none twice', async () => {
    await start();
    await putDataplane('default', 'dp-1');
    const first = await watch('?type=Dataplane&initial=true');
    await first.until((c) => c.ofType('synced').length === 1);
    await putDataplane('default', 'dp-2');
    await first.until((c) => c.ofType('put').length === 2);
    const lastSeen = first.events.at(-1)!.id!;
    first.close();

    // While no stream is open: a create, two updates of one proxy, a delete, and a write of another kind.
    await putDataplane('default', 'dp-3');
    await putDataplane('default', 'dp-2', 'api');
    await putDataplane('default', 'dp-2', 'db');
    expect((await api.del('/meshes/default/dataplanes/dp-1')).status).toBe(200);
    expect((await api.put('/meshes/other', { type: 'Mesh', name: 'other' })).status).toBe(201);
    await putDataplane('default', 'dp-4');

    const expected = ['put default/dp-3', 'put default/dp-2', 'put default/dp-2', 'delete default/dp-1', 'put default/dp-4'];
    // An EventSource reconnects with the URL it had (`initial=true`) and the header.
    const resumed = await watch('?type=Dataplane&initial=true', { 'last-event-id': lastSeen });
    await resumed.until((c) => c.events.length === expected.length);
    expect(brief(resumed.events)).toEqual(expected);
    expect(resumed.events.map((e) => e.data.resource?.networking.inbound[0].tags['mesh.io/service'])).toEqual(['web', 'api', 'db', undefined, 'web']);
    const revisions = resumed.events.map((e) => Number(e.id));
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
    expect(new Set(revisions).size).toBe(revisions.length);

    const bySince = await watch(`?type=Dataplane&since=${lastSeen}`);
    await bySince.until((c) => c.events.length === expected.length);
    expect(bySince.events).toEqual(resumed.events);
    await putDataplane('default', 'dp-5');
    await bySince.until((c) => c.events.length === expected.length + 1);
    expect(brief(bySince.events.slice(-1))).toEqual(['put default/dp-5']);
  });

  it('starts with resync for a revision no longer kept, then continues', async () => {
    await start({ changeStream: { retainedEvents: 3 } });
    const opened = await watch('?type=Dataplane&initial=true');
    await opened.until((c) => c.ofType('synced').length === 1);
    const early = opened.ofType('synced')[0]!.id!;
    for (let i = 0; i < 6; i++) await putDataplane('default', `dp-${i}`);
    await opened.until((c) => c.ofType('put').length === 6);

    const resumed = await watch(`?type=Dataplane&since=${early}`);
    await resumed.until((c) => c.events.length === 1);
    const current = Number(opened.events.at(-1)!.id);
    expect(resumed.events[0]).toEqual({ event: 'resync', data: { revision: current } });
    await putDataplane('default', 'dp-6');
    await resumed.until((c) => c.events.length === 2);
    expect(brief(resumed.events)).toEqual(['put default/dp-6']);

    // With `initial`, the current state follows the resync.
    const relisted = await watch(`?type=Dataplane&since=${early}&initial=true`);
    await relisted.until((c) => c.ofType('synced').length === 1);
    expect(relisted.events[0]!.event).toBe('resync');
    expect(relisted.ofType('put')).toHaveLength(7);

    const ahead = await watch(`?since=${current + 1000}`);
    await ahead.until((c) => c.events.length === 1);
    expect(ahead.events[0]!.event).toBe('resync');
  });

  it('gives a caller that may not read secrets no secret events, and a 403 when it asks for them', async () => {
    await start({ localhostIsAdmin: false });
    const admin = await adminToken();
    const anonymous = await watch('');
    const asAdmin = await watch('?type=Secret', { authorization: `Bearer ${admin}` });
    expect((await api.put('/meshes/default/secrets/s1', { type: 'Secret', mesh: 'default', name: 's1', data: 'c2VjcmV0' }, { authorization: `Bearer ${admin}` })).status).toBe(201);
    expect((await api.put('/global-secrets/g1', { type: 'Secret', name: 'g1', data: 'c2VjcmV0' }, { authorization: `Bearer ${admin}` })).status).toBe(201);
    expect((await api.put('/meshes/default/dataplanes/dp-1', dataplane('default', 'dp-1'), { authorization: `Bearer ${admin}` })).status).toBe(201);
    await asAdmin.until((c) => c.events.length === 2);
    expect(brief(asAdmin.events, true)).toEqual(['put Secret default/s1', 'put GlobalSecret /g1']);
    await anonymous.until((c) => c.events.some((e) => e.data.type === 'Dataplane'));
    expect(anonymous.events.filter((e) => e.data.type.includes('Secret'))).toEqual([]);

    for (const type of ['Secret', 'GlobalSecret']) {
      const refused = await api.get(`/events?type=${type}`);
      expect([refused.status, refused.body.title]).toEqual([403, 'Access Denied']);
    }
  });

  it('refuses bad parameters with 400 and the standard error body', async () => {
    await start();
    const reply = await api.get('/events?type=Nope&since=x&initial=maybe');
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(
      stdError(400, 'Invalid query parameters', 'Invalid query parameters', [
        ['type', 'unknown type "Nope"'],
        ['since', 'must be a revision: a non-negative integer'],
        ['initial', 'must be true or false'],
      ]),
    );
    expect((await api.get('/events', { 'last-event-id': '-1' })).status).toBe(400);
  });

  it('keeps an idle stream open with comment lines', async () => {
    await start({ changeStream: { keepAliveMs: 50 } });
    const client = await watch('');
    await client.until((c) => c.comments >= 2);
    expect(client.events).toEqual([]);
  });

  it('tells a client that does not read to resync and ends its stream once its buffer is full', async () => {
    await start({ changeStream: { maxBufferedBytes: 64 * 1024 } });
    const client = await watch('?type=Secret');
    client.res.pause();
    // Large secrets, written until the socket buffers and the stream's own are full.
    const data = 'A'.repeat(256 * 1024);
    for (let i = 0; i < 150; i++) await api.store.create({ type: 'Secret', mesh: 'default', name: `s-${i}`, spec: JSON.stringify({ data }) });
    client.res.resume();
    await client.until((c) => c.ended, 60_000);
    expect(client.events.at(-1)!.event).toBe('resync');
    expect(client.ofType('put').length).toBeLessThan(150);
    expect(client.ofType('resync')).toHaveLength(1);
  }, 90_000);

  it('holds no slot of the requests in flight while a stream is open', async () => {
    await start({ limits: { maxConcurrentRequests: 1 } });
    const streams = [await watch(''), await watch('')];
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    expect((await api.get('/meshes')).status).toBe(200);
  });

  it('ends every stream when the API closes', async () => {
    const closing = await startApi();
    const client = await EventClient.open(`${closing.url}/events`);
    await closing.close();
    await client.until((c) => c.ended);
  });
});

/** The admin token the control plane bootstrapped. */
async function adminToken(): Promise<string> {
  const stored = await api.manager.get(getKind('GlobalSecret'), '', 'admin-user-token');
  return Buffer.from((JSON.parse(stored!.spec) as { data: string }).data, 'base64').toString('utf8');
}
