// Zone sync end to end in one process: a global and zones on their own SQLite files, over real
// WebSockets on loopback.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { getKind, ORIGIN_LABEL, ZONE_LABEL, type ZoneInsightSpec } from '@mesh/model';
import { syncCursorSetting } from '@mesh/resource-manager';
import { keyPlace, SigningKeys, TokenService } from '@mesh/tokens';
import { afterEach, describe, expect, it } from 'vitest';
import { zoneTokenAuthentication } from './authentication.js';
import { GLOBAL_TO_ZONE_KINDS, ZONE_TO_GLOBAL_KINDS } from './channels.js';
import { eventually, openSide, put, startGlobal, startZone, type Side } from './testing.js';

const ALL = [{ match: { 'mesh.io/service': '*' } }];
const ROUTE = { sources: ALL, destinations: ALL, conf: { destination: { 'mesh.io/service': '*' } } };
const dataplane = (service: string, address = '10.0.0.1') => ({ networking: { address, inbound: [{ port: 8080, tags: { 'mesh.io/service': service } }] } });
const ingress = (address: string) => ({ networking: { address, port: 10001, advertisedAddress: address, advertisedPort: 10001 } });

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function track<T extends { stop(): Promise<unknown> }>(thing: T): T {
  cleanups.push(() => thing.stop());
  return thing;
}

async function topology() {
  const global = openSide('global');
  await put(global, 'Mesh', '', 'default', {});
  const { server, port, metrics } = await startGlobal(global);
  track(server);
  const zone1 = openSide('zone', 'zone-1');
  const zone2 = openSide('zone', 'zone-2');
  const z1 = startZone(zone1, 'zone-1', port);
  const z2 = startZone(zone2, 'zone-2', port);
  track(z1.client);
  track(z2.client);
  await eventually(() => z1.client.connected && z2.client.connected, 'both zones to connect');
  // A zone takes dataplanes of the meshes it holds: every test starts once the mesh is there.
  await eventually(async () => (await get(zone1, 'Mesh', '', 'default')) && (await get(zone2, 'Mesh', '', 'default')), 'the mesh to reach both zones');
  return { global, server, port, metrics, zone1, zone2, z1, z2 };
}

const get = (side: Side, type: string, mesh: string, name: string) => side.store.get({ type, mesh, name });
const insightOf = async (side: Side, zone: string) => {
  const stored = await get(side, 'ZoneInsight', '', zone);
  return stored ? (JSON.parse(stored.spec) as ZoneInsightSpec) : undefined;
};

describe('zone sync', () => {
  it('sends meshes and policies down and dataplanes up, named and labelled as the reference', async () => {
    const { global, zone1, zone2 } = await topology();
    await eventually(() => get(zone1, 'Mesh', '', 'default'), 'the mesh to reach zone-1');
    await put(global, 'TrafficRoute', 'default', 'route-1', ROUTE);
    const route = await eventually(() => get(zone2, 'TrafficRoute', 'default', 'route-1'), 'the route to reach zone-2');
    expect(route.labels).toEqual({ [ORIGIN_LABEL]: 'global' });
    expect(JSON.parse(route.spec)).toEqual(JSON.parse((await get(global, 'TrafficRoute', 'default', 'route-1'))!.spec));

    await put(zone1, 'Dataplane', 'default', 'web-1', dataplane('web'));
    const synced = await eventually(() => get(global, 'Dataplane', 'default', 'zone-1.web-1'), 'the dataplane to reach the global');
    expect(synced.labels).toEqual({ [ORIGIN_LABEL]: 'zone', [ZONE_LABEL]: 'zone-1' });
    expect(JSON.parse(synced.spec).networking.inbound[0].tags).toEqual({ 'mesh.io/service': 'web', 'mesh.io/zone': 'zone-1' });
    // Dataplanes never go down to other zones.
    expect(await zone2.store.count('Dataplane')).toBe(0);

    await global.manager.remove(getKind('TrafficRoute'), { mesh: 'default', name: 'route-1' });
    await eventually(async () => !(await get(zone1, 'TrafficRoute', 'default', 'route-1')) && !(await get(zone2, 'TrafficRoute', 'default', 'route-1')), 'the route deletion to reach both zones');
    await zone1.manager.remove(getKind('Dataplane'), { mesh: 'default', name: 'web-1' });
    await eventually(async () => !(await get(global, 'Dataplane', 'default', 'zone-1.web-1')), 'the dataplane deletion to reach the global');
  });

  it('sends targetRef policies down as they are stored', async () => {
    const { global, zone1 } = await topology();
    const spec = { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { connectionTimeout: '2s' } }] };
    await put(global, 'MeshTimeout', 'default', 'fast', { spec });
    const synced = await eventually(() => get(zone1, 'MeshTimeout', 'default', 'fast'), 'the MeshTimeout to reach zone-1');
    expect(synced.spec).toBe((await get(global, 'MeshTimeout', 'default', 'fast'))!.spec);
  });

  it('creates the Zone of a new zone and records its session as a ZoneInsight subscription', async () => {
    const { global, server } = await topology();
    expect(await get(global, 'Zone', '', 'zone-1')).toBeDefined();
    const insight = await eventually(async () => {
      const found = await insightOf(global, 'zone-1');
      return found?.subscriptions?.[0]?.status?.stat?.Mesh ? found : undefined;
    }, 'the subscription with counters');
    const [subscription] = insight.subscriptions!;
    expect(subscription).toMatchObject({
      globalInstanceId: server.options.instanceId,
      url: 'http://zone-1.example:5681',
      version: { meshCp: { version: '2.5.0', meshCpGlobalCompatible: true } },
      config: JSON.stringify({ mode: 'zone', multizone: { zone: { name: 'zone-1' } } }),
    });
    expect(subscription!.connectTime).toBeDefined();
    expect(subscription!.disconnectTime).toBeUndefined();
    expect(subscription!.status!.stat!.Mesh).toEqual({ responsesSent: '1', responsesAcknowledged: '1' });
  });

  it('sends a first sync in as few messages as fit the message limit, every kind in order, the cursor on the last', async () => {
    const global = openSide('global');
    await put(global, 'Mesh', '', 'default', {});
    for (let i = 0; i < 20; i++) await put(global, 'TrafficRoute', 'default', `route-${i}`, ROUTE);
    await put(global, 'MeshTimeout', 'default', 'fast', { spec: { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { connectionTimeout: '2s' } }] } });
    const kinds = GLOBAL_TO_ZONE_KINDS.map((kind) => kind.name);
    const holdsEverything = async (zone: Side) =>
      (await get(zone, 'MeshTimeout', 'default', 'fast')) && (await get(zone, 'TrafficRoute', 'default', 'route-19')) && (await zone.store.getSetting(syncCursorSetting('global')));

    // Within the default limit: one message for every kind, and one for the zone's dataplanes and their insights.
    const { server, port, metrics } = await startGlobal(global);
    track(server);
    const zone1 = openSide('zone', 'zone-1');
    await put(zone1, 'Mesh', '', 'default', {});
    for (let i = 0; i < 5; i++) await put(zone1, 'Dataplane', 'default', `web-${i}`, dataplane('web', `10.0.0.${i + 1}`));
    const z1 = startZone(zone1, 'zone-1', port);
    track(z1.client);
    await eventually(() => holdsEverything(zone1), 'the first sync to reach zone-1');
    await eventually(async () => (await global.store.count('Dataplane')) === 5, 'the dataplanes to reach the global');
    expect(metrics.messages).toEqual([kinds]);
    expect(z1.metrics.messages[0]).toEqual(ZONE_TO_GLOBAL_KINDS.map((kind) => kind.name));

    // Below a small limit: several messages, each of whole kinds, in order; the zone holds all once the last is applied.
    const { server: small, port: smallPort, metrics: smallMetrics } = await startGlobal(global, { maxMessageBytes: 4096 });
    track(small);
    const zone2 = openSide('zone', 'zone-2');
    const z2 = startZone(zone2, 'zone-2', smallPort);
    track(z2.client);
    await eventually(() => holdsEverything(zone2), 'the first sync to reach zone-2');
    expect(smallMetrics.messages.length).toBeGreaterThan(1);
    expect(smallMetrics.messages.flat()).toEqual(kinds);
    expect(JSON.parse((await zone2.store.getSetting(syncCursorSetting('global')))!)).toEqual({ store: 'global-store', revision: expect.any(Number) as number });
    expect((await get(zone2, 'TrafficRoute', 'default', 'route-19'))!.labels).toEqual({ [ORIGIN_LABEL]: 'global' });
  });

  it('resumes from the last revision applied after a disconnect, and converges', async () => {
    const { global, zone1, z1, port } = await topology();
    await put(global, 'TrafficRoute', 'default', 'before', ROUTE);
    await eventually(() => get(zone1, 'TrafficRoute', 'default', 'before'), 'the first route');
    await z1.client.stop();
    await eventually(async () => (await insightOf(global, 'zone-1'))?.subscriptions?.at(-1)?.disconnectTime, 'the disconnect to be recorded');

    await put(global, 'TrafficRoute', 'default', 'while-away', ROUTE);
    await global.manager.remove(getKind('TrafficRoute'), { mesh: 'default', name: 'before' });
    const written = await global.store.currentRevision();
    await put(zone1, 'Dataplane', 'default', 'web-1', dataplane('web'));

    const again = startZone(zone1, 'zone-1', port);
    track(again.client);
    await eventually(() => get(zone1, 'TrafficRoute', 'default', 'while-away'), 'the route written while away');
    await eventually(async () => !(await get(zone1, 'TrafficRoute', 'default', 'before')), 'the route deleted while away to go');
    await eventually(() => get(global, 'Dataplane', 'default', 'zone-1.web-1'), 'the dataplane written while away to go up');
    // A catch-up: only the kinds that changed, not every kind the global sends.
    expect([...again.metrics.sent.keys()]).toEqual(['Dataplane']);
    const cursor = JSON.parse((await zone1.store.getSetting(syncCursorSetting('global')))!);
    expect(cursor.store).toBe('global-store');
    expect(cursor.revision).toBeGreaterThanOrEqual(written);
    const subscriptions = (await insightOf(global, 'zone-1'))!.subscriptions!;
    expect(subscriptions).toHaveLength(2);
    expect(subscriptions.filter((s) => s.disconnectTime === undefined)).toHaveLength(1);
  });

  it('syncs everything again when the cursor is of another history, deleting what the global no longer has', async () => {
    const { global, zone1, z1 } = await topology();
    await put(global, 'TrafficRoute', 'default', 'kept', ROUTE);
    await put(global, 'TrafficRoute', 'default', 'dropped', ROUTE);
    await eventually(() => get(zone1, 'TrafficRoute', 'default', 'dropped'), 'both routes');
    await z1.client.stop();
    // A global started on another store (a restored backup): same names, another history.
    const { server: other, port: otherPort, metrics: otherMetrics } = await startGlobal(global, { clusterId: 'another-store' });
    track(other);
    await global.manager.remove(getKind('TrafficRoute'), { mesh: 'default', name: 'dropped' });
    const again = startZone(zone1, 'zone-1', otherPort);
    track(again.client);
    await eventually(async () => !(await get(zone1, 'TrafficRoute', 'default', 'dropped')), 'the full sync to prune');
    expect(await get(zone1, 'TrafficRoute', 'default', 'kept')).toBeDefined();
    // A full sync: every kind the global sends, once.
    expect(otherMetrics.sent.get('Mesh')).toBe(1);
    expect(otherMetrics.sent.get('ExternalService')).toBe(1);
  });

  it('passes each zone the other zones’ ingresses, not its own, and not those of a disabled zone', async () => {
    const { global, zone1, zone2 } = await topology();
    await put(zone1, 'ZoneIngress', '', 'ingress', ingress('192.0.2.1'));
    const up = await eventually(() => get(global, 'ZoneIngress', '', 'zone-1.ingress'), 'the ingress to reach the global');
    expect(JSON.parse(up.spec).zone).toBe('zone-1');
    const passed = await eventually(() => get(zone2, 'ZoneIngress', '', 'zone-1.ingress'), 'the ingress to reach zone-2');
    expect(passed.labels).toEqual({ [ORIGIN_LABEL]: 'global', [ZONE_LABEL]: 'zone-1' });
    expect(await get(zone1, 'ZoneIngress', '', 'zone-1.ingress')).toBeUndefined();

    await put(global, 'Zone', '', 'zone-1', { enabled: false });
    await eventually(async () => !(await get(zone2, 'ZoneIngress', '', 'zone-1.ingress')), 'the disabled zone’s ingress to leave zone-2');
  });

  it('requires a zone token of scope cp of the zone when the global says so', async () => {
    const global = openSide('global');
    const keys = new SigningKeys(global.store);
    await keys.ensure(global.manager, keyPlace('zone'));
    const tokens = new TokenService({ keys });
    const { server, port } = await startGlobal(global, { authenticate: zoneTokenAuthentication(tokens) });
    track(server);
    const refusedWith = async (zone: string, token: string | undefined) => {
      const side = startZone(openSide('zone', zone), zone, port, token === undefined ? {} : { token });
      track(side.client);
      const error = await eventually(() => side.client.lastError, `${zone} to be refused`);
      await side.client.stop();
      return error.message;
    };
    expect(await refusedWith('zone-1', undefined)).toBe('a zone token is required: set multizone.zone.kds.authn.zoneTokenFile on the zone');
    expect(await refusedWith('zone-1', 'not-a-token')).toBe('could not parse the token');
    const proxies = await tokens.issueZoneToken({ zone: 'zone-1', scope: ['ingress'] }, 3600);
    expect(await refusedWith('zone-1', proxies)).toBe("token cannot be used to authenticate zone entity (cp is out of token's scope: [ingress])");
    const other = await tokens.issueZoneToken({ zone: 'zone-2', scope: ['cp'] }, 3600);
    expect(await refusedWith('zone-1', other)).toBe('zone from requestor: zone-1 is different than in token: zone-2');
    expect(await get(global, 'Zone', '', 'zone-1')).toBeUndefined();

    const z1 = startZone(openSide('zone', 'zone-1'), 'zone-1', port, { token: await tokens.issueZoneToken({ zone: 'zone-1', scope: ['cp'] }, 3600) });
    track(z1.client);
    await eventually(() => z1.client.connected, 'zone-1 to connect with its token');
  });

  it('refuses a disabled zone at connect and drops its session when it is disabled', async () => {
    const { global, z1, port } = await topology();
    await put(global, 'Zone', '', 'zone-1', { enabled: false });
    await eventually(() => !z1.client.connected, 'zone-1 to be dropped');
    await eventually(async () => (await insightOf(global, 'zone-1'))?.subscriptions?.every((s) => s.disconnectTime !== undefined), 'its subscription to close');

    const zone3 = openSide('zone', 'zone-3');
    await put(global, 'Zone', '', 'zone-3', { enabled: false });
    const z3 = startZone(zone3, 'zone-3', port);
    track(z3.client);
    await eventually(() => z3.client.lastError?.message.includes('zone zone-3 is disabled'), 'zone-3 to be refused');
    expect(z3.client.connected).toBe(false);
    expect(await insightOf(global, 'zone-3')).toBeUndefined();

    await put(global, 'Zone', '', 'zone-3', { enabled: true });
    await eventually(() => z3.client.connected, 'zone-3 to connect once enabled');
  });

  it('keeps a disconnected zone’s resources until its Zone is deleted, which the global refuses while it is connected', async () => {
    const { global, zone1, z1 } = await topology();
    const zoneKind = getKind('Zone');
    await put(zone1, 'Dataplane', 'default', 'web-1', dataplane('web'));
    await eventually(() => get(global, 'Dataplane', 'default', 'zone-1.web-1'), 'the dataplane to reach the global');
    await expect(global.manager.remove(zoneKind, { mesh: '', name: 'zone-1' })).rejects.toMatchObject({
      code: 'invalid',
      violations: [{ field: 'zone', message: 'unable to delete Zone, Zone CP is still connected, please shut it down first' }],
    });
    await z1.client.stop();
    await eventually(async () => (await insightOf(global, 'zone-1'))?.subscriptions?.every((s) => s.disconnectTime !== undefined), 'the disconnect');
    expect(await get(global, 'Dataplane', 'default', 'zone-1.web-1')).toBeDefined();
    await global.manager.remove(zoneKind, { mesh: '', name: 'zone-1' });
    expect(await get(global, 'Dataplane', 'default', 'zone-1.web-1')).toBeUndefined();
    expect(await get(global, 'ZoneInsight', '', 'zone-1')).toBeUndefined();
    expect(await global.store.getSetting(syncCursorSetting('zone-1'))).toBeUndefined();
  });

  it('gives zones the zone-ingress keys and the public half of the zone-token keys, and leaves their own secrets alone', async () => {
    const { global, zone1 } = await topology();
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const data = Buffer.from(pem).toString('base64');
    await put(zone1, 'GlobalSecret', '', 'admin-user-token', { data: Buffer.from('local').toString('base64') });
    await put(global, 'GlobalSecret', '', 'zone-token-signing-key-1', { data });
    await put(global, 'GlobalSecret', '', 'zone-ingress-token-signing-key-1', { data });
    await put(global, 'GlobalSecret', '', 'user-token-signing-key-1', { data });
    const published = await eventually(() => get(zone1, 'GlobalSecret', '', 'zone-token-signing-public-key-1'), 'the public key');
    const publicPem = Buffer.from(JSON.parse(published.spec).data, 'base64').toString();
    expect(publicPem).toContain('-----BEGIN RSA PUBLIC KEY-----');
    expect(createPublicKey(publicPem).export({ type: 'spki', format: 'pem' })).toEqual(createPublicKey(pem).export({ type: 'spki', format: 'pem' }));
    await eventually(() => get(zone1, 'GlobalSecret', '', 'zone-ingress-token-signing-key-1'), 'the zone-ingress key');
    expect(await get(zone1, 'GlobalSecret', '', 'zone-token-signing-key-1')).toBeUndefined();
    expect(await get(zone1, 'GlobalSecret', '', 'user-token-signing-key-1')).toBeUndefined();
    expect(await get(zone1, 'GlobalSecret', '', 'admin-user-token')).toBeDefined();
  });

  it('forwards an API request for a zone’s proxy to that zone', async () => {
    const { server } = await topology();
    await expect(server.forward('zone-2', '/meshes/default/dataplanes/web-1/xds?shadow=true')).resolves.toMatchObject({
      status: 200,
      body: JSON.stringify({ zone: 'zone-2', path: '/meshes/default/dataplanes/web-1/xds?shadow=true' }),
    });
    expect(server.forward('zone-9', '/meshes/default/dataplanes/x/xds')).toBeUndefined();
  });
});
