// End to end: one global and two zones (startTopology), each a separate process with its own
// SQLite file, synced over the global's zone sync port (TLS with the certificate the global generated).
import { startTopology, type Topology, type TopologyControlPlane } from '@mesh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Started = TopologyControlPlane;

let topology: Topology;
let global: Started;
let zone1: Started;
let zone2: Started;

const json = { 'content-type': 'application/json' };
const put = (cp: Started, path: string, body: unknown) => fetch(`${cp.api}${path}`, { method: 'PUT', headers: json, body: JSON.stringify(body) });
const del = (cp: Started, path: string) => fetch(`${cp.api}${path}`, { method: 'DELETE' });
async function get(cp: Started, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${cp.api}${path}`);
  return { status: res.status, body: await res.json() };
}

/** Polls until `check` passes (an end-to-end change takes a moment to travel). */
async function eventually(check: () => Promise<void>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const MESH = { type: 'Mesh', name: 'shop', mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } };
const ALL = [{ match: { 'mesh.io/service': '*' } }];
const dataplane = (name: string, address: string, service: string, outbound?: string) => ({
  type: 'Dataplane',
  mesh: 'shop',
  name,
  networking: {
    address,
    inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': service, 'mesh.io/protocol': 'http' } }],
    ...(outbound ? { outbound: [{ port: 10001, tags: { 'mesh.io/service': outbound } }] } : {}),
  },
});

/** The addresses of every endpoint in a proxy's configuration dump. */
function endpointAddresses(dump: { configs: Array<Record<string, any>> }): string[] {
  const endpoints = dump.configs.find((config) => String(config['@type']).endsWith('EndpointsConfigDump'));
  return (endpoints?.dynamicEndpointConfigs ?? []).flatMap((entry: any) =>
    (entry.endpointConfig.endpoints ?? []).flatMap((locality: any) =>
      (locality.lbEndpoints ?? []).map((lb: any) => `${lb.endpoint.address.socketAddress.address}:${lb.endpoint.address.socketAddress.portValue}`),
    ),
  );
}

const statuses = async () => (await get(global, '/status/zones')).body as Array<{ name: string; url: string; active: boolean }>;

beforeAll(async () => {
  topology = await startTopology({ zones: 2 });
  ({ global } = topology);
  [zone1, zone2] = [topology.zones[0]!, topology.zones[1]!];
}, 300_000);

afterAll(async () => {
  await topology?.stop();
});

describe('a global and two zones', () => {
  it('shows both zones active, with the address each reported', async () => {
    await eventually(async () => {
      const zones = await statuses();
      expect(zones.map(({ name, active }) => ({ name, active }))).toEqual([
        { name: 'zone-1', active: true },
        { name: 'zone-2', active: true },
      ]);
      expect(zones[0]!.url).toMatch(new RegExp(`^http://.+:${zone1.ports.http}$`));
    });
    const overview = (await get(global, '/zones+insights/zone-1')).body;
    expect(overview.zoneInsight.subscriptions[0]).toMatchObject({ globalInstanceId: expect.any(String), version: { meshCp: { version: '2.5.0' } } });
    expect(JSON.parse(overview.zoneInsight.subscriptions[0].config)).toMatchObject({ mode: 'zone', multizone: { zone: { name: 'zone-1' } } });
  });

  it('sends a mesh and a policy put on the global to both zones, which refuse to write them themselves', async () => {
    expect((await put(global, '/meshes/shop', MESH)).status).toBe(201);
    expect((await put(global, '/meshes/shop/traffic-permissions/allow', { type: 'TrafficPermission', mesh: 'shop', name: 'allow', sources: ALL, destinations: ALL })).status).toBe(201);
    for (const zone of [zone1, zone2]) {
      await eventually(async () => {
        const { status, body } = await get(zone, '/meshes/shop/traffic-permissions/allow');
        expect(status).toBe(200);
        expect(body.labels).toEqual({ 'mesh.io/origin': 'global' });
      });
    }
    const refused = await put(zone1, '/meshes/shop', MESH);
    expect(refused.status).toBe(405);
    expect(await refused.json()).toEqual({ type: '/std-errors', status: 405, title: 'Method not Allowed', detail: 'Method not allowed', details: 'Method not allowed' });
    const catalogue = (await get(zone1, '/policies')).body.policies as Array<{ name: string; readOnly: boolean }>;
    expect(catalogue.find((p) => p.name === 'TrafficPermission')?.readOnly).toBe(true);
  });

  it('counts sync in the metrics of both sides', async () => {
    const scrape = async (cp: Started) => (await fetch(`${cp.diagnostics}/metrics`)).text();
    const value = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    await eventually(async () => {
      const globalMetrics = await scrape(global);
      expect(value(globalMetrics, 'kds_delta_streams_active')).toBe(2);
      expect(value(globalMetrics, 'kds_delta_responses_sent{type_url="TrafficPermission"}')).toBeGreaterThanOrEqual(2);
      expect(value(globalMetrics, 'kds_delta_requests_received{type_url="TrafficPermission",confirmation="ACK"}')).toBeGreaterThanOrEqual(2);
    });
    const zoneMetrics = await scrape(zone1);
    expect(value(zoneMetrics, 'kds_delta_streams_active')).toBe(1);
    expect(value(zoneMetrics, 'kds_resources_sync_count')).toBeGreaterThan(0);
  });

  it('brings a zone’s dataplane up to the global as <zone>.<name>, with its insights, and to no other zone', async () => {
    expect((await put(zone1, '/meshes/shop/dataplanes/backend-1', dataplane('backend-1', '10.1.0.1', 'backend'))).status).toBe(201);
    await eventually(async () => {
      const { status, body } = await get(global, '/meshes/shop/dataplanes/zone-1.backend-1');
      expect(status).toBe(200);
      expect(body.labels).toEqual({ 'mesh.io/origin': 'zone', 'mesh.io/zone': 'zone-1' });
      expect(body.networking.inbound[0].tags['mesh.io/zone']).toBe('zone-1');
    });
    const overviews = (await get(global, '/meshes/shop/dataplanes+insights')).body;
    expect(overviews.items.map((item: any) => item.name)).toEqual(['zone-1.backend-1']);
    expect((await get(global, '/mesh-insights/shop')).body.dataplanesByType.standard.total).toBe(1);
    expect((await get(global, '/meshes/shop/service-insights/backend')).body).toMatchObject({ name: 'backend', dataplanes: { total: 1 } });
    expect((await get(zone2, '/meshes/shop/dataplanes')).body.total).toBe(0);
  });

  it('streams on the global’s /events what a zone syncs to it: the current state, then each change', async () => {
    const aborted = new AbortController();
    const stream = await fetch(`${global.api}/events?type=Dataplane&mesh=shop&initial=true`, { headers: { accept: 'text/event-stream' }, signal: aborted.signal });
    expect(stream.status).toBe(200);
    let received = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of stream.body!) received += decoder.decode(chunk as Uint8Array, { stream: true });
    })().catch(() => {});
    const events = () =>
      received
        .split('\n\n')
        .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: /^data: (.*)$/m.exec(block)?.[1] }))
        .filter((block) => block.event !== undefined)
        .map((block) => ({ event: block.event, data: JSON.parse(block.data!) as { name?: string; resource?: { labels?: Record<string, string> } } }));
    await eventually(() => {
      expect(events().map((e) => e.event)).toContain('synced');
      return Promise.resolve();
    });
    expect(events()[0]).toMatchObject({ event: 'put', data: { name: 'zone-1.backend-1' } });

    const labelled = { ...dataplane('backend-1', '10.1.0.1', 'backend'), labels: { team: 'payments' } };
    expect((await put(zone1, '/meshes/shop/dataplanes/backend-1', labelled)).status).toBe(200);
    await eventually(async () => {
      const last = events().at(-1)!;
      expect(last).toMatchObject({ event: 'put', data: { name: 'zone-1.backend-1', resource: { labels: { team: 'payments', 'mesh.io/zone': 'zone-1' } } } });
      expect(last.data.resource).toEqual((await get(global, '/meshes/shop/dataplanes/zone-1.backend-1')).body);
    });
    aborted.abort();
    await reading;
    expect((await put(zone1, '/meshes/shop/dataplanes/backend-1', dataplane('backend-1', '10.1.0.1', 'backend'))).status).toBe(200);
    await eventually(async () => expect((await get(global, '/meshes/shop/dataplanes/zone-1.backend-1')).body.labels).toEqual({ 'mesh.io/origin': 'zone', 'mesh.io/zone': 'zone-1' }));
  });

  it('lets zone 2’s proxies reach zone 1’s service through zone 1’s ingress', async () => {
    const ingress = { type: 'ZoneIngress', name: 'ingress', networking: { address: '10.1.0.100', port: 10001, advertisedAddress: '192.0.2.1', advertisedPort: 10001 } };
    expect((await put(zone1, '/zone-ingresses/ingress', ingress)).status).toBe(201);
    await eventually(async () => {
      const { body } = await get(zone2, '/zone-ingresses/zone-1.ingress');
      expect(body.availableServices).toEqual([{ tags: { 'mesh.io/protocol': 'http', 'mesh.io/service': 'backend', 'mesh.io/zone': 'zone-1' }, instances: 1, mesh: 'shop' }]);
    });
    expect((await put(zone2, '/meshes/shop/dataplanes/web-1', dataplane('web-1', '10.2.0.1', 'web', 'backend'))).status).toBe(201);
    await eventually(async () => {
      expect(endpointAddresses((await get(zone2, '/meshes/shop/dataplanes/web-1/xds')).body)).toContain('192.0.2.1:10001');
    });
  });

  it('answers inspection of a zone’s proxy on the global by asking that zone', async () => {
    await eventually(async () => expect((await get(global, '/meshes/shop/dataplanes/zone-2.web-1')).status).toBe(200));
    const fromGlobal = await get(global, '/meshes/shop/dataplanes/zone-2.web-1/xds');
    expect(fromGlobal.status).toBe(200);
    expect(fromGlobal.body.configs[0].bootstrap.node.id).toBe('shop.web-1');
    expect(endpointAddresses(fromGlobal.body)).toContain('192.0.2.1:10001');
    const policies = await get(global, '/meshes/shop/dataplanes/zone-2.web-1/policies');
    expect(policies.status).toBe(200);
    expect(policies.body).toEqual((await get(zone2, '/meshes/shop/dataplanes/web-1/policies')).body);
    expect((await get(global, '/zoneingresses/zone-1.ingress/xds')).body.configs[0].bootstrap.node.id).toBe('.ingress');
  });

  it('propagates deletes both ways', async () => {
    expect((await del(global, '/meshes/shop/traffic-permissions/allow')).status).toBe(200);
    for (const zone of [zone1, zone2]) await eventually(async () => expect((await get(zone, '/meshes/shop/traffic-permissions/allow')).status).toBe(404));
    expect((await del(zone1, '/meshes/shop/dataplanes/backend-1')).status).toBe(200);
    await eventually(async () => expect((await get(global, '/meshes/shop/dataplanes/zone-1.backend-1')).status).toBe(404));
    await eventually(async () => expect((await get(zone2, '/zone-ingresses/zone-1.ingress')).body.availableServices ?? []).toEqual([]));
  });

  it('tells when a zone dies, keeps what it synced, and converges once it is back, with nothing duplicated', async () => {
    await zone2.stop('SIGKILL');
    await eventually(async () => expect((await statuses()).find((z) => z.name === 'zone-2')?.active).toBe(false));
    const offline = await get(global, '/meshes/shop/dataplanes/zone-2.web-1/xds');
    expect(offline.status).toBe(400);
    expect(offline.body.detail).toBe('stream to execute XDS Config Dump operations is not yet connected');
    expect((await get(global, '/meshes/shop/dataplanes/zone-2.web-1')).status).toBe(200);

    // Changes while zone 2 is away: a new policy, a deleted one, the mesh changed.
    const timeout = { type: 'Timeout', mesh: 'shop', name: 'while-away', sources: ALL, destinations: ALL, conf: { connectTimeout: '3s' } };
    expect((await put(global, '/meshes/shop/timeouts/while-away', timeout)).status).toBe(201);
    expect((await del(global, '/meshes/shop/timeouts/timeout-all-shop')).status).toBe(200);

    await zone2.start();
    await eventually(async () => expect((await statuses()).find((z) => z.name === 'zone-2')?.active).toBe(true));
    await eventually(async () => {
      expect((await get(zone2, '/meshes/shop/timeouts/while-away')).status).toBe(200);
      expect((await get(zone2, '/meshes/shop/timeouts/timeout-all-shop')).status).toBe(404);
    });
    const names = async (cp: Started, path: string) => ((await get(cp, path)).body.items as Array<{ name: string }>).map((item) => item.name);
    expect(await names(zone2, '/meshes/shop/timeouts')).toEqual(await names(global, '/meshes/shop/timeouts'));
    expect(await names(global, '/meshes/shop/dataplanes')).toEqual(['zone-2.web-1']);
    const subscriptions = (await get(global, '/zones+insights/zone-2')).body.zoneInsight.subscriptions as Array<{ disconnectTime?: string }>;
    expect(subscriptions.filter((s) => s.disconnectTime === undefined)).toHaveLength(1);
  });

  it('survives the global dying: zones reconnect to it once it is back and send what changed meanwhile', async () => {
    await global.stop('SIGKILL');
    expect((await put(zone1, '/meshes/shop/dataplanes/backend-2', dataplane('backend-2', '10.1.0.2', 'backend'))).status).toBe(201);
    await global.start();
    await eventually(async () => {
      expect((await statuses()).map((z) => z.active)).toEqual([true, true]);
      expect((await get(global, '/meshes/shop/dataplanes/zone-1.backend-2')).status).toBe(200);
    });
    for (const zone of ['zone-1', 'zone-2']) {
      const subscriptions = (await get(global, `/zones+insights/${zone}`)).body.zoneInsight.subscriptions as Array<{ disconnectTime?: string }>;
      expect(subscriptions.filter((s) => s.disconnectTime === undefined)).toHaveLength(1);
    }
  });
});
