// End to end against the real binary: a connected proxy's insight keeps up with its stream while
// changes never stop coming. Token checks and insight writes wait for pushes to settle, but not
// forever: a stream whose insight was not written would have its subscription closed by the
// sweep of lost streams, and its proxy would show offline while connected (docs/xds.md, Insights).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdsClient, TYPE } from './testing/ads-client.js';
import type { startControlPlane } from './testing/process.js';
import { callApi, sidecar, startWithPlaintextDpServer } from './testing/xds-fixtures.js';

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let cp: Instance;
let dpAddress: string;
let client: AdsClient | undefined;

const api = (method: string, path: string, body?: unknown) => callApi(cp.url, method, path, body);

type Subscription = { connectTime?: string; disconnectTime?: string; generation?: number };

const subscriptionsOf = async (name: string): Promise<Subscription[]> =>
  (await api('GET', `/meshes/default/dataplanes+insights/${name}`)).json?.dataplaneInsight?.subscriptions ?? [];

beforeAll(async () => {
  ({ cp, dpAddress } = await startWithPlaintextDpServer({
    MESH_DP_SERVER_AUTHN_DP_PROXY_TYPE: 'none',
    MESH_XDS_SERVER_DATAPLANE_STATUS_FLUSH_INTERVAL: '500ms',
    // Live streams move their subscription's generation every second; lost ones are swept every 2 s.
    MESH_METRICS_DATAPLANE_IDLE_TIMEOUT: '2s',
  }));
  for (const dataplane of [sidecar('web-1', '10.0.0.1', 'web', ['backend']), sidecar('backend-1', '10.0.0.2', 'backend')]) {
    expect((await api('PUT', `/meshes/default/dataplanes/${dataplane.name}`, dataplane)).status).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  client?.close();
  await cp?.stop();
});

describe('insights under a steady flow of changes', () => {
  it('keeps a connected proxy online while every 100 ms a change reaches it, across several sweeps', async () => {
    client = new AdsClient({ address: dpAddress, nodeId: 'default.web-1' });
    client.request({ typeUrl: TYPE.cluster });
    client.request({ typeUrl: TYPE.listener });
    await client.next(TYPE.cluster, 1);
    const connected = await subscriptionsOf('web-1');
    expect(connected.at(-1)?.connectTime).toBeDefined();
    // A Timeout of web's outbound changed again and again: web-1 is recomputed every time, so its
    // configurations never settle for long, for four sweeps of lost streams.
    const until = Date.now() + 8000;
    for (let round = 0; Date.now() < until; round++) {
      const res = await api('PUT', '/meshes/default/timeouts/steady', {
        type: 'Timeout',
        mesh: 'default',
        name: 'steady',
        sources: [{ match: { 'mesh.io/service': 'web' } }],
        destinations: [{ match: { 'mesh.io/service': 'backend' } }],
        conf: { connectTimeout: `${1 + (round % 50)}s` },
      });
      expect([200, 201]).toContain(res.status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const subscriptions = await subscriptionsOf('web-1');
    expect(subscriptions).toHaveLength(connected.length);
    const current = subscriptions.at(-1);
    expect(current?.disconnectTime).toBeUndefined();
    // Its generation moved as the stream lived, and the writes kept up with it.
    expect(current?.generation ?? 0).toBeGreaterThan(connected.at(-1)?.generation ?? 0);
  }, 30_000);
});
