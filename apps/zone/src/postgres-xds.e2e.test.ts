// A proxy moving between zone control-plane instances behind one PostgreSQL: connected to one that
// is killed (SIGKILL), it reconnects to the other and gets the same configuration, versions
// included (they are digests of the configuration, equal on every instance), and its insight
// shows the lost stream closed and the new one open. Real binaries, real PostgreSQL (skipped
// outside CI when its server binaries are not installed).
import { findPostgresBinaries, startPostgresServer, type PostgresServer } from '@mesh/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdsClient, type DiscoveryResponse, resourceNames, TYPE } from './testing/ads-client.js';
import { eventually } from './testing/envoy.js';
import { freePort, startControlPlane } from './testing/process.js';

const available = findPostgresBinaries() !== undefined;
if (!available && process.env.CI) throw new Error('PostgreSQL server binaries are required in CI (.ci/run installs them)');

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

interface Received {
  clusters: DiscoveryResponse;
  endpoints: DiscoveryResponse;
  listeners: DiscoveryResponse;
}

/** Subscribes as Envoy does (clusters, their endpoints, listeners), ACKing each response. */
async function subscribe(client: AdsClient): Promise<Received> {
  client.request({ typeUrl: TYPE.cluster });
  client.request({ typeUrl: TYPE.listener });
  const clusters = await client.next(TYPE.cluster, 1);
  client.answer(clusters);
  const eds = clusters.resources.filter((cluster) => cluster.type === 'EDS').map((cluster) => String(cluster.name));
  client.request({ typeUrl: TYPE.endpoints, resourceNames: eds });
  const endpoints = await client.next(TYPE.endpoints, 1);
  client.answer(endpoints, { resourceNames: eds });
  const listeners = await client.next(TYPE.listener, 1);
  client.answer(listeners);
  return { clusters, endpoints, listeners };
}

const summary = (received: Received) =>
  Object.fromEntries(Object.entries(received).map(([type, response]) => [type, { version: response.version_info, names: resourceNames(response).sort() }]));

describe.skipIf(!available)('a proxy of zone control planes on one PostgreSQL', () => {
  let server: PostgresServer;
  const instances: Instance[] = [];
  const clients: AdsClient[] = [];

  beforeAll(async () => {
    server = await startPostgresServer();
    const env = {
      MESH_STORE_TYPE: 'postgres',
      MESH_STORE_POSTGRES_HOST: server.host,
      MESH_STORE_POSTGRES_PORT: String(server.port),
      MESH_STORE_POSTGRES_USER: server.user,
      MESH_STORE_POSTGRES_PASSWORD: '',
      MESH_STORE_POSTGRES_DB_NAME: await server.createDatabase(),
      MESH_DP_SERVER_TLS_ENABLED: 'false',
      MESH_XDS_SERVER_DATAPLANE_STATUS_FLUSH_INTERVAL: '500ms',
    };
    for (let i = 0; i < 2; i++) instances.push(await startControlPlane({ env: { ...env, MESH_DP_SERVER_PORT: String(await freePort()) } }));
  }, 90_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all(instances.map((cp) => cp.stop('SIGKILL')));
    await server?.stop();
  }, 60_000);

  it('reconnects to the surviving instance and gets the same configuration', async () => {
    const [doomed, survivor] = instances as [Instance, Instance];
    const api = (cp: Instance, method: string, path: string, body?: unknown) =>
      fetch(`${cp.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const dataplane = (name: string, address: string, service: string, outbound: string[] = []) => ({
      type: 'Dataplane',
      mesh: 'default',
      name,
      networking: {
        address,
        inbound: [{ port: 8080, tags: { 'mesh.io/service': service, 'mesh.io/protocol': 'http' } }],
        outbound: outbound.map((to, at) => ({ port: 10001 + at, tags: { 'mesh.io/service': to } })),
      },
    });
    // Both instances hold the default mesh before the proxy connects (the leader created it).
    await eventually(async () => (await api(survivor, 'GET', '/meshes/default')).status, (status) => status === 200, 'the default mesh on both instances');
    expect((await api(doomed, 'PUT', '/meshes/default/dataplanes/web-1', dataplane('web-1', '10.0.0.1', 'web', ['backend']))).status).toBe(201);
    expect((await api(doomed, 'PUT', '/meshes/default/dataplanes/backend-1', dataplane('backend-1', '10.0.0.2', 'backend'))).status).toBe(201);
    const token = await (await api(doomed, 'POST', '/tokens/dataplane', { name: 'web-1', mesh: 'default', validFor: '1h' })).text();

    const first = new AdsClient({ address: `127.0.0.1:${doomed.env.MESH_DP_SERVER_PORT}`, nodeId: 'default.web-1', token });
    clients.push(first);
    const before = summary(await subscribe(first));
    const firstOverview = await eventually(
      async () => (await (await api(survivor, 'GET', '/meshes/default/dataplanes+insights/web-1')).json()) as { dataplaneInsight?: { subscriptions?: Array<{ controlPlaneInstanceId: string }> } },
      (overview) => (overview.dataplaneInsight?.subscriptions ?? []).length === 1,
      'the first subscription in the insight',
    );
    // The other instance does not reach the proxy's admin API: it says which instance does.
    const stats = await api(survivor, 'GET', '/meshes/default/dataplanes/web-1/stats');
    expect({ status: stats.status, body: await stats.json() }).toMatchObject({
      status: 503,
      body: {
        title: 'Could not execute admin operation',
        detail: `the proxy is connected to another instance of the control plane (${firstOverview.dataplaneInsight!.subscriptions![0]!.controlPlaneInstanceId}); its admin API is reached only through that instance`,
      },
    });

    await doomed.stop('SIGKILL');
    expect(await first.ended()).toMatchObject({ code: 14 });
    const second = new AdsClient({ address: `127.0.0.1:${survivor.env.MESH_DP_SERVER_PORT}`, nodeId: 'default.web-1', token });
    clients.push(second);
    const after = summary(await subscribe(second));
    expect(after).toEqual(before);
    expect(after.endpoints?.names).toEqual(['backend']);

    // The stream lost with the killed instance is closed by the new one; the proxy is online through the survivor.
    const overview = await eventually(
      async () => (await (await api(survivor, 'GET', '/meshes/default/dataplanes+insights/web-1')).json()) as {
        dataplaneInsight?: { subscriptions?: Array<{ controlPlaneInstanceId: string; disconnectTime?: string }> };
      },
      (value) => (value.dataplaneInsight?.subscriptions ?? []).length === 2,
      'the second subscription in the insight',
    );
    const [lost, live] = overview.dataplaneInsight!.subscriptions!;
    expect(lost?.disconnectTime).toEqual(expect.any(String));
    expect(live?.disconnectTime).toBeUndefined();
    expect(live?.controlPlaneInstanceId).not.toBe(lost?.controlPlaneInstanceId);
  });
});
