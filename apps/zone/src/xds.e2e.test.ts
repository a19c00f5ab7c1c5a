// The data plane server at the protocol level, against the real binary: a grpc-js ADS client
// subscribes, ACKs and NACKs as Envoy does; pushes follow store changes and reach only the proxies
// they concern; tokens are checked; insights follow the streams; `POST /bootstrap` answers as the
// reference's runner expects.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdsClient, DeltaAdsClient, type DeltaDiscoveryResponse, type DiscoveryResponse, resourceNames, TYPE } from './testing/ads-client.js';
import { freePort, startControlPlane } from './testing/process.js';
import { callApi, sidecar, startWithPlaintextDpServer } from './testing/xds-fixtures.js';

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let cp: Instance;
let dpAddress: string;
const clients: Array<{ close(): void }> = [];
/** The stream of web-1 the first test opens and later tests look at. */
let webClient: AdsClient | undefined;

const api = (method: string, path: string, body?: unknown) => callApi(cp.url, method, path, body);

/** The types a proxy of these tests subscribes to, in the order it answers them. */
const TYPES_ANSWERED = [TYPE.cluster, TYPE.endpoints, TYPE.listener];

const putDataplane = (body: ReturnType<typeof sidecar>) => api('PUT', `/meshes/default/dataplanes/${body.name}`, body);

async function tokenFor(name: string, validFor = '24h'): Promise<string> {
  const res = await api('POST', '/tokens/dataplane', { name, mesh: 'default', validFor });
  expect(res.status).toBe(200);
  return res.text;
}

function connect(nodeId: string, token: string | undefined, metadata: Record<string, unknown> = {}): AdsClient {
  const client = new AdsClient({ address: dpAddress, nodeId, ...(token !== undefined ? { token } : {}), metadata });
  clients.push(client);
  return client;
}

/** Subscribes like Envoy: clusters and listeners, then the endpoints of the EDS clusters once clusters arrive. */
async function subscribe(client: AdsClient): Promise<{ clusters: DiscoveryResponse; listeners: DiscoveryResponse; endpoints: DiscoveryResponse }> {
  client.request({ typeUrl: TYPE.cluster });
  client.request({ typeUrl: TYPE.listener });
  const clusters = await client.next(TYPE.cluster, 1);
  client.answer(clusters);
  const edsClusters = clusters.resources.filter((cluster) => cluster.type === 'EDS').map((cluster) => String(cluster.name));
  client.request({ typeUrl: TYPE.endpoints, resourceNames: edsClusters });
  const endpoints = await client.next(TYPE.endpoints, 1);
  client.answer(endpoints, { resourceNames: edsClusters });
  const listeners = await client.next(TYPE.listener, 1);
  client.answer(listeners);
  return { clusters, listeners, endpoints };
}

const endpointAddresses = (response: DiscoveryResponse, cluster: string): string[] => {
  const assignment = response.resources.find((resource) => resource.cluster_name === cluster) as
    | { endpoints?: Array<{ lb_endpoints?: Array<{ endpoint?: { address?: { socket_address?: { address?: string; port_value?: number } } } }> }> }
    | undefined;
  return (assignment?.endpoints ?? [])
    .flatMap((locality) => locality.lb_endpoints ?? [])
    .map((lb) => `${lb.endpoint?.address?.socket_address?.address}:${lb.endpoint?.address?.socket_address?.port_value}`)
    .sort();
};

async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const insightOf = async (name: string) => (await api('GET', `/meshes/default/dataplanes+insights/${name}`)).json as { dataplaneInsight?: { subscriptions?: Array<Record<string, any>> } } | undefined;

beforeAll(async () => {
  ({ cp, dpAddress } = await startWithPlaintextDpServer({ MESH_XDS_SERVER_DATAPLANE_STATUS_FLUSH_INTERVAL: '500ms', MESH_XDS_SERVER_NACK_BACKOFF: '200ms' }));
  await putDataplane(sidecar('web-1', '10.0.0.1', 'web', ['backend']));
  await putDataplane(sidecar('backend-1', '10.0.0.2', 'backend'));
  await putDataplane(sidecar('other-1', '10.0.0.3', 'other', ['db']));
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await cp?.stop();
});

describe('ADS state of the world', () => {
  it('serves a subscribed proxy, pushes endpoint changes to the proxies reaching them only, and counts ACKs in its insight', async () => {
    const web = connect('default.web-1', await tokenFor('web-1'), { version: { meshDp: { version: '2.5.0' }, envoy: { version: '1.40.0' } } });
    webClient = web;
    const other = connect('default.other-1', await tokenFor('other-1'));
    const first = await subscribe(web);
    await subscribe(other);
    expect(resourceNames(first.clusters)).toEqual(expect.arrayContaining(['backend', 'localhost:80', 'mesh:envoy:admin']));
    expect(resourceNames(first.listeners)).toEqual(expect.arrayContaining(['inbound:10.0.0.1:8080', 'outbound:127.0.0.1:10001']));
    expect(endpointAddresses(first.endpoints, 'backend')).toEqual(['10.0.0.2:8080']);
    const otherResponses = other.responses.length;

    // A new backend: web gets new endpoints (and only endpoints); other, which does not reach backend, gets nothing.
    await putDataplane(sidecar('backend-2', '10.0.0.4', 'backend'));
    const pushed = await web.next(TYPE.endpoints, 2);
    expect(endpointAddresses(pushed, 'backend')).toEqual(['10.0.0.2:8080', '10.0.0.4:8080']);
    expect(pushed.version_info).not.toBe(first.endpoints.version_info);
    web.answer(pushed, { resourceNames: ['backend'] });
    expect(web.of(TYPE.cluster)).toHaveLength(1);
    expect(web.of(TYPE.listener)).toHaveLength(1);

    // A change other is affected by arrives after the one it is not affected by: nothing came in between.
    await api('PUT', '/meshes/default/timeouts/from-other', {
      type: 'Timeout',
      mesh: 'default',
      name: 'from-other',
      sources: [{ match: { 'mesh.io/service': 'other' } }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
      conf: { connectTimeout: '2s' },
    });
    const otherClusters = await other.next(TYPE.cluster, 2);
    expect(other.responses[otherResponses]).toBe(otherClusters);
    expect(otherClusters.resources.find((cluster) => cluster.name === 'db')).toMatchObject({ connect_timeout: { seconds: '2' } });
    expect(web.of(TYPE.cluster)).toHaveLength(1);

    const insight = await eventually(
      () => insightOf('web-1'),
      (value) => Number(value?.dataplaneInsight?.subscriptions?.at(-1)?.status?.total?.responsesAcknowledged ?? 0) >= 4,
      'the ACKs in the insight',
    );
    const subscription = insight?.dataplaneInsight?.subscriptions?.at(-1);
    expect(subscription).toMatchObject({
      controlPlaneInstanceId: expect.any(String),
      connectTime: expect.any(String),
      version: { meshDp: { version: '2.5.0' }, envoy: { version: '1.40.0' } },
      status: { total: { responsesSent: '4', responsesAcknowledged: '4' }, cds: { responsesSent: '1', responsesAcknowledged: '1' }, eds: { responsesSent: '2' } },
    });
    expect(subscription?.disconnectTime).toBeUndefined();
    expect((await api('GET', '/meshes/default/dataplanes+insights/web-1')).json).toMatchObject({ dataplaneInsight: { subscriptions: [expect.anything()] } });
  });

  it("dates each section of `/xds` by when its own type was last sent: a push of endpoints leaves the listeners' time", async () => {
    await putDataplane(sidecar('dated-1', '10.0.0.50', 'dated', ['backend']));
    const client = connect('default.dated-1', await tokenFor('dated-1'));
    await subscribe(client);
    type Section = 'bootstrap' | 'clusters' | 'endpoints' | 'listeners';
    const sectionOf: Record<Section, string> = { bootstrap: 'BootstrapConfigDump', clusters: 'ClustersConfigDump', endpoints: 'EndpointsConfigDump', listeners: 'ListenersConfigDump' };
    /** The times of each section's entries, and the endpoints' version. */
    const dated = async () => {
      const configs = (await api('GET', '/meshes/default/dataplanes/dated-1/xds')).json.configs as Array<Record<string, any>>;
      const section = (name: Section) => configs.find((config) => config['@type'].endsWith(`.${sectionOf[name]}`))!;
      const entries = {
        bootstrap: [section('bootstrap')],
        clusters: section('clusters').dynamicActiveClusters,
        endpoints: section('endpoints').dynamicEndpointConfigs,
        listeners: section('listeners').dynamicListeners.map((listener: Record<string, any>) => listener.activeState),
      } as Record<Section, Array<Record<string, any>>>;
      const times = Object.fromEntries(Object.entries(entries).map(([name, list]) => [name, [...new Set(list.map((entry) => entry.lastUpdated))]])) as Record<Section, string[]>;
      return { times, endpointsVersion: entries.endpoints[0]?.versionInfo as string };
    };
    const before = await eventually(dated, (value) => value.times.endpoints.length === 1, 'the first dump');
    for (const section of Object.keys(sectionOf) as Section[]) expect(before.times[section], section).toEqual([expect.stringMatching(/^\d{4}-\d\d-\d\dT/)]);

    // A new backend instance: only endpoints are pushed to dated-1.
    await putDataplane(sidecar('backend-dated', '10.0.0.51', 'backend'));
    const pushed = await client.next(TYPE.endpoints, 2);
    client.answer(pushed, { resourceNames: ['backend'] });
    const after = await eventually(dated, (value) => value.endpointsVersion === pushed.version_info, 'the dump to show the pushed endpoints');
    expect(client.of(TYPE.listener)).toHaveLength(1);
    expect(client.of(TYPE.cluster)).toHaveLength(1);
    expect(after.times.listeners).toEqual(before.times.listeners);
    expect(after.times.clusters).toEqual(before.times.clusters);
    expect(after.times.bootstrap).toEqual(before.times.bootstrap);
    expect(Date.parse(after.times.endpoints[0]!)).toBeGreaterThanOrEqual(Date.parse(before.times.listeners[0]!));
    expect((await api('DELETE', '/meshes/default/dataplanes/backend-dated')).status).toBe(200);
  });

  it('records a NACK, keeps the rejected version from coming back, and sends the next change', async () => {
    const backend = connect('default.backend-1', await tokenFor('backend-1'));
    const { listeners } = await subscribe(backend);
    // Reject the listeners of the next change.
    await api('PUT', '/meshes/default/fault-injections/slow-backend', {
      type: 'FaultInjection',
      mesh: 'default',
      name: 'slow-backend',
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' } }],
      conf: { delay: { percentage: 50, value: '5s' } },
    });
    const rejected = await backend.next(TYPE.listener, 2);
    backend.answer(rejected, { error: 'listener rejected by the test', acceptedVersion: listeners.version_info });
    // The next change is sent (after the back-off); the rejected version never came again.
    await api('DELETE', '/meshes/default/fault-injections/slow-backend');
    const next = await backend.next(TYPE.listener, 3);
    expect(next.version_info).not.toBe(rejected.version_info);
    expect(backend.of(TYPE.listener).map((response) => response.version_info)).toEqual([listeners.version_info, rejected.version_info, next.version_info]);
    const insight = await eventually(
      () => insightOf('backend-1'),
      (value) => value?.dataplaneInsight?.subscriptions?.at(-1)?.status?.lds?.responsesRejected === '1',
      'the NACK in the insight',
    );
    expect(insight?.dataplaneInsight?.subscriptions?.at(-1)?.status?.total?.responsesRejected).toBe('1');
  });

  it('counts streams, responses, ACKs and NACKs, delivery and configuration computations in the metrics', async () => {
    const scrape = async () => (await fetch(`http://127.0.0.1:${cp.ports.diagnostics}/metrics`)).text();
    const value = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    const before = await scrape();
    await putDataplane(sidecar('metrics-1', '10.0.0.10', 'metrics'));
    const client = connect('default.metrics-1', await tokenFor('metrics-1'));
    await subscribe(client);
    const text = await eventually(scrape, (now) => value(now, `xds_requests_received{type_url="${TYPE.listener}",confirmation="ACK"}`) > value(before, `xds_requests_received{type_url="${TYPE.listener}",confirmation="ACK"}`), 'the ACK in the metrics');
    expect(value(text, 'xds_streams_active')).toBeGreaterThanOrEqual(1);
    expect(value(text, `xds_responses_sent{type_url="${TYPE.cluster}"}`)).toBeGreaterThan(value(before, `xds_responses_sent{type_url="${TYPE.cluster}"}`));
    expect(value(text, `xds_requests_received{type_url="${TYPE.listener}",confirmation="NACK"}`)).toBeGreaterThanOrEqual(1);
    expect(value(text, 'xds_delivery_count')).toBeGreaterThan(value(before, 'xds_delivery_count'));
    expect(value(text, 'xds_generation_count{proxy_type="dataplane",result="generated"}')).toBeGreaterThan(value(before, 'xds_generation_count{proxy_type="dataplane",result="generated"}'));
    expect(text).toMatch(/^xds_generation_errors 0$/m);
    // The connected proxies' resources are encodings in use.
    expect(value(text, 'xds_encoding_cache_bytes')).toBeGreaterThan(0);
    client.close();
  });

  it('shows a proxy online while its stream is open and offline once it closes', async () => {
    await putDataplane(sidecar('short-1', '10.0.0.9', 'short'));
    const client = connect('default.short-1', await tokenFor('short-1'));
    await subscribe(client);
    const online = await eventually(
      () => api('GET', '/meshes/default/dataplanes+insights/short-1'),
      (res) => res.json?.dataplane !== undefined && isOnline(res.json),
      'the proxy to show online',
    );
    expect(online.status).toBe(200);
    client.close();
    const offline = await eventually(
      () => api('GET', '/meshes/default/dataplanes+insights/short-1'),
      (res) => res.json?.dataplaneInsight?.subscriptions?.at(-1)?.disconnectTime !== undefined,
      'the subscription to close',
    );
    expect(isOnline(offline.json)).toBe(false);
  });

  it('serves `/xds` from what the live stream sent: its versions and the node it reported', async () => {
    const res = await eventually(
      () => api('GET', '/meshes/default/dataplanes/web-1/xds'),
      (value) => value.status === 200 && JSON.stringify(value.json).includes('versionInfo'),
      'a live /xds',
    );
    const configs = res.json.configs as Array<Record<string, any>>;
    const clusters = configs.find((config) => config['@type'].endsWith('ClustersConfigDump'));
    expect(clusters?.versionInfo).toBe(webClient?.of(TYPE.cluster).at(-1)?.version_info);
    expect(configs[0]?.bootstrap?.node?.metadata?.version).toContain('1.40.0');
  });
});

describe('live views of proxies', () => {
  /** A local HTTP server that is not a proxy's admin API: what it answers must never come back through the control plane. */
  async function bystander(answer: (req: IncomingMessage, res: ServerResponse) => void) {
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(req.url ?? '');
      req.resume();
      answer(req, res);
    });
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    clients.push({ close: () => server.close() });
    return { port, requests };
  }
  const secret = `secret-${randomUUID()}`;
  const answerSecret = (status: number) => (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(secret);
  };
  const withAdminPort = (name: string, address: string, service: string, port: number) => {
    const body = sidecar(name, address, service);
    return { ...body, networking: { ...body.networking, admin: { port } } } as ReturnType<typeof sidecar>;
  };

  it('answers 404 for an unknown proxy, and 503 for one not connected here without reaching the admin port its resource names', async () => {
    expect((await api('GET', '/meshes/default/dataplanes/nobody/stats')).json).toMatchObject({ status: 404, title: 'Could not get dataplane resource' });
    expect((await api('GET', '/zoneegresses/nobody/stats')).json).toMatchObject({ status: 404, title: 'Could not get zone egress resource' });
    const local = await bystander(answerSecret(200));
    await putDataplane(withAdminPort('lonely-1', '127.0.0.1', 'lonely', local.port));
    for (const operation of ['stats', 'clusters']) {
      const res = await api('GET', `/meshes/default/dataplanes/lonely-1/${operation}`);
      expect(res.status).toBe(503);
      expect(res.json).toMatchObject({ type: '/std-errors', status: 503, title: 'Could not execute admin operation', detail: 'the proxy is not connected to this control plane' });
      expect(res.text).not.toContain(secret);
    }
    expect(local.requests).toEqual([]);
  });

  it('reaches a connected proxy at the admin port it announced when it connected, and passes on nothing of a failed answer', async () => {
    const named = await bystander(answerSecret(200));
    const announced = await bystander((req, res) => {
      const ok = req.url?.startsWith('/stats');
      res.writeHead(ok ? 200 : 500, { 'content-type': 'text/plain' });
      res.end(ok ? 'cluster_manager.cds.update_rejected: 0' : secret);
    });
    // The resource names one port, the proxy announces another: only the announced one is asked.
    await putDataplane(withAdminPort('admin-1', '10.0.0.60', 'admin', named.port));
    const client = connect('default.admin-1', await tokenFor('admin-1'), { 'dataplane.admin.port': String(announced.port), 'dataplane.admin.address': '127.0.0.1' });
    await subscribe(client);
    const stats = await api('GET', '/meshes/default/dataplanes/admin-1/stats?filter=update_rejected');
    expect({ status: stats.status, text: stats.text }).toEqual({ status: 200, text: 'cluster_manager.cds.update_rejected: 0' });
    const clusters = await api('GET', '/meshes/default/dataplanes/admin-1/clusters');
    expect(clusters.status).toBe(503);
    expect(clusters.json.detail).toBe(`the proxy did not answer on its admin API at 127.0.0.1:${announced.port}`);
    expect(clusters.text).not.toContain(secret);
    expect(announced.requests).toEqual(['/stats?filter=update_rejected', '/clusters']);
    expect(named.requests).toEqual([]);
    // A proxy that announced no admin port (other-1 connected above) is not reached at all.
    expect((await api('GET', '/meshes/default/dataplanes/other-1/stats')).json).toMatchObject({ status: 503, detail: 'the proxy did not announce an admin port when it connected' });
  });
});

/** Online as the overview tells it (docs/insights.md, Status): a subscription connected and not disconnected. */
function isOnline(overview: { dataplaneInsight?: { subscriptions?: Array<{ connectTime?: string; disconnectTime?: string }> } }): boolean {
  return (overview.dataplaneInsight?.subscriptions ?? []).some((s) => s.connectTime && !s.disconnectTime);
}

describe('ADS authentication', () => {
  const refusal = async (client: AdsClient) => {
    client.request({ typeUrl: TYPE.cluster });
    return client.ended();
  };

  it('closes the stream of a proxy without a valid token, with the reference status and message', async () => {
    expect(await refusal(connect('default.web-1', undefined))).toEqual({ code: 2, details: 'authentication failed: could not parse the token' });
    expect(await refusal(connect('default.web-1', 'not-a-jwt'))).toEqual({ code: 2, details: 'authentication failed: could not parse the token' });
    expect(await refusal(connect('default.web-1', await tokenFor('backend-1')))).toEqual({
      code: 2,
      details: 'authentication failed: proxy name from requestor: web-1 is different than in token: backend-1',
    });
    const tagged = await api('POST', '/tokens/dataplane', { mesh: 'default', tags: { 'mesh.io/service': ['backend'] }, validFor: '1h' });
    expect(await refusal(connect('default.web-1', tagged.text))).toEqual({
      code: 2,
      details: 'authentication failed: dataplane contains tag "mesh.io/service" with value "web" which is not allowed with this token. Allowed values in token are [backend]',
    });
    const unknown = await refusal(connect('default.ghost-1', await tokenFor('ghost-1')));
    expect(unknown.details).toBe('resource "default.ghost-1" not found; create a Dataplane in the control plane first or pass it as an argument to mesh-dp');
  });

  it('takes each proxy type only with its own kind of token, and says which one it takes', async () => {
    const dataplaneToken = async (type: string) => (await api('POST', '/tokens/dataplane', { name: 'web-1', mesh: 'default', type, validFor: '1h' })).text;
    // The legacy zone-ingress token form, a dataplane token of type ingress, is no sidecar's.
    expect(await refusal(connect('default.web-1', await dataplaneToken('ingress')))).toEqual({
      code: 2,
      details: 'authentication failed: a dataplane token of type "ingress" cannot authenticate a dataplane proxy; it takes a dataplane token of type "dataplane" or without a type',
    });
    const zoneToken = (scope: string) => api('POST', '/tokens/zone', { zone: '', scope: [scope], validFor: '1h' });
    expect(await refusal(connect('default.web-1', (await zoneToken('ingress')).text))).toEqual({
      code: 2,
      details: 'authentication failed: a zone token cannot authenticate a dataplane proxy; it takes a dataplane token',
    });
    for (const type of ['', 'dataplane']) {
      const { clusters } = await subscribe(connect('default.web-1', await dataplaneToken(type)));
      expect(resourceNames(clusters)).toContain('backend');
    }

    expect((await api('PUT', '/zone-ingresses/ingress-auth', { type: 'ZoneIngress', name: 'ingress-auth', networking: { address: '10.0.2.1', port: 10001 } })).status).toBe(201);
    expect((await api('PUT', '/zoneegresses/egress-auth', { type: 'ZoneEgress', name: 'egress-auth', networking: { address: '10.0.2.2', port: 10002 } })).status).toBe(201);
    const zoneProxy = (type: 'ingress' | 'egress', token: string) => connect(`.${type}-auth`, token, { 'dataplane.proxyType': type });
    for (const type of ['', 'ingress']) {
      const token = (await api('POST', '/tokens/dataplane', { mesh: 'default', type, validFor: '1h' })).text;
      expect(await refusal(zoneProxy('ingress', token))).toEqual({
        code: 2,
        details: 'authentication failed: a dataplane token cannot authenticate a zone ingress; it takes a zone token whose scope holds ingress (or a zone-ingress token)',
      });
      expect(await refusal(zoneProxy('egress', token))).toEqual({
        code: 2,
        details: 'authentication failed: a dataplane token cannot authenticate a zone egress; it takes a zone token whose scope holds egress',
      });
    }
    for (const type of ['ingress', 'egress'] as const) {
      const client = zoneProxy(type, (await zoneToken(type)).text);
      client.request({ typeUrl: TYPE.listener });
      await client.next(TYPE.listener, 1);
      expect(client.status).toBeUndefined();
    }
  });

  it('takes a node repeated in later requests, and closes the stream when it names another proxy', async () => {
    const client = connect('default.web-1', await tokenFor('web-1'));
    const { clusters } = await subscribe(client);
    client.request({ typeUrl: TYPE.cluster, versionInfo: clusters.version_info, nonce: clusters.nonce, nodeId: 'default.web-1' });
    client.request({ typeUrl: TYPE.cluster, versionInfo: clusters.version_info, nonce: clusters.nonce, nodeId: 'default.backend-1' });
    expect(await client.ended()).toEqual({
      code: 2,
      details: 'stream was authenticated for ID default.web-1. Received request is for node with ID default.backend-1. Node ID cannot be changed after stream is initialized',
    });
  });

  it('refuses an expired token and a revoked one', async () => {
    const expiring = await tokenFor('web-1', '1s');
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect(await refusal(connect('default.web-1', expiring))).toEqual({ code: 2, details: 'authentication failed: token is expired' });

    const revoked = await tokenFor('web-1');
    const jti = JSON.parse(Buffer.from(revoked.split('.')[1]!, 'base64url').toString('utf8')).jti as string;
    const secret = { type: 'Secret', mesh: 'default', name: 'dataplane-token-revocations-default', data: Buffer.from(`${jti}\n`).toString('base64') };
    expect((await api('PUT', '/meshes/default/secrets/dataplane-token-revocations-default', secret)).status).toBe(201);
    expect(await refusal(connect('default.web-1', revoked))).toEqual({ code: 2, details: 'authentication failed: token is revoked' });
  });

  it('closes a live stream once its token is revoked, while changes keep reaching it and it ACKs them', async () => {
    const token = await tokenFor('web-1');
    const client = connect('default.web-1', token);
    const { clusters } = await subscribe(client);
    const edsClusters = clusters.resources.filter((cluster) => cluster.type === 'EDS').map((cluster) => String(cluster.name));
    const jti = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).jti as string;
    const secret = { type: 'Secret', mesh: 'default', name: 'dataplane-token-revocations-default', data: Buffer.from(`${jti}\n`).toString('base64') };
    expect([200, 201]).toContain((await api('PUT', '/meshes/default/secrets/dataplane-token-revocations-default', secret)).status);
    let over = false;
    const ended = client.ended(30_000).finally(() => (over = true));
    // The token is checked again 10 s after the stream opened; a Timeout of web's outbound changes
    // every 100 ms, so the recomputations never settle and the check must not wait for them forever.
    const answered = new Map(TYPES_ANSWERED.map((typeUrl) => [typeUrl, client.of(typeUrl).length]));
    for (let round = 0; !over && round < 250; round++) {
      const timeout = { type: 'Timeout', mesh: 'default', name: 'revocation-load', sources: [{ match: { 'mesh.io/service': 'web' } }], destinations: [{ match: { 'mesh.io/service': 'backend' } }], conf: { connectTimeout: `${1 + (round % 50)}s` } };
      expect([200, 201]).toContain((await api('PUT', '/meshes/default/timeouts/revocation-load', timeout)).status);
      for (const typeUrl of TYPES_ANSWERED) {
        const responses = client.of(typeUrl);
        for (let at = answered.get(typeUrl)!; at < responses.length; at++) client.answer(responses[at]!, typeUrl === TYPE.endpoints ? { resourceNames: edsClusters } : {});
        answered.set(typeUrl, responses.length);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await ended).toEqual({ code: 2, details: 'authentication failed: token is revoked' });
    expect((await api('DELETE', '/meshes/default/timeouts/revocation-load')).status).toBe(200);
  }, 40_000);
});

describe('POST /bootstrap', () => {
  const bootstrap = (body: unknown) =>
    fetch(`http://${dpAddress}/bootstrap`, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it("answers the runner's request with an Envoy bootstrap connecting back with the token", async () => {
    const token = await tokenFor('boot-1');
    const resource = JSON.stringify({ ...sidecar('boot-1', '10.0.0.5', 'boot'), networking: { ...sidecar('boot-1', '10.0.0.5', 'boot').networking, admin: { port: 9911 } } });
    const res = await bootstrap({ mesh: 'default', name: 'boot-1', proxyType: 'dataplane', dataplaneToken: token, dataplaneResource: resource, version: { meshDp: { version: '2.5.0' } } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { bootstrap: string; meshSidecarConfiguration: unknown };
    expect(body.meshSidecarConfiguration).toEqual({ networking: { isUsingTransparentProxy: false }, metrics: { aggregate: [] } });
    const envoy = JSON.parse(Buffer.from(body.bootstrap, 'base64').toString('utf8'));
    expect(envoy.node).toMatchObject({ id: 'default.boot-1', cluster: 'boot', metadata: { 'dataplane.admin.port': '9911', 'dataplane.proxyType': 'dataplane', 'dataplane.resource': resource } });
    expect(envoy.dynamicResources.adsConfig.grpcServices[0]).toEqual({ envoyGrpc: { clusterName: 'ads_cluster' }, initialMetadata: [{ key: 'authorization', value: token }] });
    expect(envoy.staticResources.clusters[0].loadAssignment.endpoints[0].lbEndpoints[0].endpoint.address.socketAddress).toEqual({
      address: '127.0.0.1',
      portValue: Number(dpAddress.split(':')[1]),
    });
    expect(envoy.admin.address.socketAddress).toEqual({ address: '127.0.0.1', portValue: 9911 });
    expect(envoy.dynamicResources.adsConfig.apiType).toBe('GRPC');

    const delta = await bootstrap({ mesh: 'default', name: 'boot-1', proxyType: 'dataplane', dataplaneToken: token, dataplaneResource: resource, features: ['feature-delta-grpc'] });
    expect(JSON.parse(Buffer.from(((await delta.json()) as { bootstrap: string }).bootstrap, 'base64').toString('utf8')).dynamicResources.adsConfig.apiType).toBe('DELTA_GRPC');
  });

  it("takes the reference runner's `version.kumaDp` as the runner's version, shown under `meshDp` in the insight", async () => {
    await putDataplane(sidecar('ref-dp-1', '10.0.0.70', 'refdp'));
    const token = await tokenFor('ref-dp-1');
    // The request as the reference's runner (2.5) sends it.
    const res = await bootstrap({
      mesh: 'default',
      name: 'ref-dp-1',
      proxyType: 'dataplane',
      dataplaneToken: token,
      version: {
        kumaDp: { version: '2.5.0', gitTag: '2.5.0', gitCommit: '0a1b2c3d4e5f60718293a4b5c6d7e8f901234567', buildDate: '2023-11-20T10:00:00Z' },
        envoy: { version: '1.28.0', build: 'd8b1d4e0/1.28.0/Clean/RELEASE/BoringSSL', kumaDpCompatible: true },
      },
      caCert: '',
      dynamicMetadata: {},
      operatingSystem: 'linux',
      features: ['feature-tcp-accesslog-via-named-pipe'],
      resources: { maxHeapSizeBytes: 0 },
      accessLogSocketPath: '/tmp/kuma-al-ref-dp-1-default.sock',
      metricsResources: { socketPath: '/tmp/kuma-mh-ref-dp-1-default.sock', certPath: '', keyPath: '' },
    });
    expect(res.status).toBe(200);
    const node = JSON.parse(Buffer.from(((await res.json()) as { bootstrap: string }).bootstrap, 'base64').toString('utf8')).node;
    const version = {
      meshDp: { version: '2.5.0', gitTag: '2.5.0', gitCommit: '0a1b2c3d4e5f60718293a4b5c6d7e8f901234567', buildDate: '2023-11-20T10:00:00Z' },
      envoy: { version: '1.28.0', build: 'd8b1d4e0/1.28.0/Clean/RELEASE/BoringSSL', meshDpCompatible: true },
    };
    expect(node.metadata.version).toEqual(version);
    // Envoy connects with the node of its bootstrap.
    await subscribe(connect(node.id, token, node.metadata));
    const insight = await eventually(() => insightOf('ref-dp-1'), (value) => value?.dataplaneInsight?.subscriptions?.at(-1)?.version !== undefined, 'the insight of ref-dp-1');
    expect(insight?.dataplaneInsight?.subscriptions?.at(-1)?.version).toEqual(version);

    // A node whose own metadata names the runner's version `kumaDp` (a bootstrap made for the reference) is read the same way.
    await putDataplane(sidecar('ref-dp-2', '10.0.0.71', 'refdp'));
    await subscribe(connect('default.ref-dp-2', await tokenFor('ref-dp-2'), { version: { kumaDp: { version: '2.5.0' }, envoy: { version: '1.28.0', kumaDpCompatible: true } } }));
    const second = await eventually(() => insightOf('ref-dp-2'), (value) => value?.dataplaneInsight?.subscriptions?.at(-1)?.version !== undefined, 'the insight of ref-dp-2');
    expect(second?.dataplaneInsight?.subscriptions?.at(-1)?.version).toEqual({ meshDp: { version: '2.5.0' }, envoy: { version: '1.28.0', meshDpCompatible: true } });
  });

  it('refuses a request without a token, an invalid resource, an unknown proxy and malformed fields, as the reference does', async () => {
    const missing = await bootstrap({ mesh: 'default', name: 'web-1' });
    expect(missing.status).toBe(422);
    expect(await missing.text()).toMatch(/^Dataplane Token is required/);
    const token = await tokenFor('bad-1');
    const invalid = await bootstrap({ mesh: 'default', name: 'bad-1', dataplaneToken: token, dataplaneResource: JSON.stringify({ type: 'Dataplane', mesh: 'default', name: 'bad-1', networking: { address: '' } }) });
    expect(invalid.status).toBe(422);
    const noMesh = await bootstrap({ dataplaneToken: token, dataplaneResource: JSON.stringify({ ...sidecar('bad-1', '10.0.0.6', 'bad'), mesh: 'nowhere' }) });
    expect({ status: noMesh.status, text: await noMesh.text() }).toEqual({ status: 422, text: 'mesh: mesh "nowhere" does not exist' });
    const unknown = await bootstrap({ mesh: 'default', name: 'nobody', dataplaneToken: token });
    expect({ status: unknown.status, text: await unknown.text() }).toEqual({ status: 404, text: '' });
    const notMine = await bootstrap({ mesh: 'default', name: 'web-1', proxyType: 'constructor', dataplaneToken: token });
    expect({ status: notMine.status, text: await notMine.text() }).toEqual({ status: 422, text: 'unknown proxy type constructor' });
    const numericToken = await bootstrap({ mesh: 'default', name: 'web-1', dataplaneToken: 123 });
    expect({ status: numericToken.status, text: await numericToken.text() }).toEqual({ status: 400, text: 'could not parse the request: dataplaneToken: Invalid input: expected string, received number' });
    const badCa = await bootstrap({ mesh: 'default', name: 'web-1', dataplaneToken: token, caCert: 'not a certificate' });
    expect({ status: badCa.status, text: await badCa.text() }).toEqual({ status: 400, text: 'could not parse certificate from request .CaCert' });
    const wrongPath = await fetch(`http://${dpAddress}/other`);
    expect({ status: wrongPath.status, text: await wrongPath.text() }).toEqual({ status: 404, text: '404: Page Not Found' });
    const get = await fetch(`http://${dpAddress}/bootstrap`);
    expect({ status: get.status, allow: get.headers.get('allow'), text: await get.text() }).toEqual({ status: 405, allow: 'POST', text: 'Method Not Allowed' });
    const notJson = await fetch(`http://${dpAddress}/bootstrap`, { method: 'POST', body: '{' });
    expect({ status: notJson.status, text: await notJson.text() }).toEqual({ status: 400, text: 'could not parse the request: expected a JSON object' });
  });
});

describe('zone proxies', () => {
  it('serves a zone ingress authenticated with a zone token of the ingress scope, and refuses another scope', async () => {
    const ingress = { type: 'ZoneIngress', name: 'ingress-1', networking: { address: '10.0.1.1', port: 10001 } };
    expect((await api('PUT', '/zone-ingresses/ingress-1', ingress)).status).toBe(201);
    const egressOnly = await api('POST', '/tokens/zone', { zone: '', scope: ['egress'], validFor: '1h' });
    const refused = connect('.ingress-1', egressOnly.text, { 'dataplane.proxyType': 'ingress' });
    refused.request({ typeUrl: TYPE.cluster });
    expect(await refused.ended()).toEqual({ code: 2, details: "authentication failed: token cannot be used to authenticate zone entity (ingress is out of token's scope: [egress])" });

    const token = await api('POST', '/tokens/zone', { zone: '', scope: ['ingress'], validFor: '1h' });
    const client = connect('.ingress-1', token.text, { 'dataplane.proxyType': 'ingress', 'dataplane.admin.port': '9902' });
    client.request({ typeUrl: TYPE.listener });
    client.request({ typeUrl: TYPE.cluster });
    const listeners = await client.next(TYPE.listener, 1);
    expect(resourceNames(listeners).every((name) => name === 'inbound:10.0.1.1:10001')).toBe(true);
    const clusters = await client.next(TYPE.cluster, 1);
    expect(clusters.resources.find((cluster) => cluster.name === 'mesh:envoy:admin')).toMatchObject({
      load_assignment: { endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { port_value: 9902 } } } }] }] },
    });
    // Its `/xds` shows what it received.
    const dump = (await api('GET', '/zoneingresses/ingress-1/xds')).json.configs as Array<Record<string, any>>;
    const dumped = (type: string) => dump.find((config) => config['@type'].endsWith(`.${type}`))!;
    expect(dumped('ListenersConfigDump').dynamicListeners.map((listener: Record<string, any>) => listener.name)).toEqual(resourceNames(listeners));
    expect(dumped('ClustersConfigDump').dynamicActiveClusters.map((entry: Record<string, any>) => entry.cluster.name).sort()).toEqual(resourceNames(clusters).sort());
    expect(dumped('ListenersConfigDump').versionInfo).toBe(listeners.version_info);
    const overview = await eventually(
      () => api('GET', '/zoneingresses+insights/ingress-1'),
      (res) => res.json?.zoneIngressInsight?.subscriptions?.length === 1,
      'the zone ingress insight',
    );
    expect(overview.json.zoneIngressInsight.subscriptions[0].connectTime).toEqual(expect.any(String));
  });
});

describe('proxies registering again', () => {
  /** A stream of a proxy that brings its resource, as `mesh-dp` does, once it got its first listeners. */
  async function register(nodeId: string, token: string, proxyType: string, resource: Record<string, unknown>): Promise<AdsClient> {
    const client = connect(nodeId, token, { 'dataplane.proxyType': proxyType, 'dataplane.resource': JSON.stringify(resource) });
    client.request({ typeUrl: TYPE.listener });
    await client.next(TYPE.listener, 1);
    return client;
  }
  const zoneToken = async (scope: string) => (await api('POST', '/tokens/zone', { zone: '', scope: [scope], validFor: '1h' })).text;
  const stored = async (path: string) => (await api('GET', path)).json as Record<string, any>;

  it("keep a zone ingress's available services: back as it was, the ingress writes nothing; moved, it keeps them", async () => {
    const token = await zoneToken('ingress');
    const ingress = { type: 'ZoneIngress', name: 'ingress-back', networking: { address: '10.0.3.1', port: 10001 } };
    (await register('.ingress-back', token, 'ingress', ingress)).close();
    const before = await eventually(() => stored('/zone-ingresses/ingress-back'), (body) => body.availableServices?.length > 0, 'the ingress to advertise services');

    (await register('.ingress-back', token, 'ingress', ingress)).close();
    expect(await stored('/zone-ingresses/ingress-back')).toEqual(before);

    const moved = { ...ingress, networking: { ...ingress.networking, port: 10002 } };
    await register('.ingress-back', token, 'ingress', moved);
    const after = await stored('/zone-ingresses/ingress-back');
    expect([after.networking.port, after.availableServices]).toEqual([10002, before.availableServices]);
  });

  it("keep the health a dataplane's inbounds were given, and a zone egress as it was", async () => {
    const plain = sidecar('probed-1', '10.0.3.2', 'probed');
    const probed = { ...plain, networking: { ...plain.networking, inbound: [{ ...plain.networking.inbound[0]!, serviceProbe: { interval: '1s' } }] } };
    (await register('default.probed-1', await tokenFor('probed-1'), 'dataplane', probed)).close();
    expect((await stored('/meshes/default/dataplanes/probed-1')).networking.inbound[0].health).toEqual({ ready: false });
    // A health checker found it ready.
    const checked = await stored('/meshes/default/dataplanes/probed-1');
    checked.networking.inbound[0].health = { ready: true };
    expect((await api('PUT', '/meshes/default/dataplanes/probed-1', checked)).status).toBe(200);
    const ready = await stored('/meshes/default/dataplanes/probed-1');

    // Back, and staying: its stream lasts until the end, so it is not deregistered meanwhile.
    await register('default.probed-1', await tokenFor('probed-1'), 'dataplane', probed);
    expect(await stored('/meshes/default/dataplanes/probed-1')).toEqual(ready);

    const egress = { type: 'ZoneEgress', name: 'egress-back', networking: { address: '10.0.3.3', port: 10003 } };
    const token = await zoneToken('egress');
    (await register('.egress-back', token, 'egress', egress)).close();
    const first = await stored('/zoneegresses/egress-back');
    await register('.egress-back', token, 'egress', egress);
    expect(await stored('/zoneegresses/egress-back')).toEqual(first);
  });
});

describe('ADS incremental', () => {
  function connectDelta(nodeId: string, token: string | undefined): DeltaAdsClient {
    const client = new DeltaAdsClient({ address: dpAddress, nodeId, ...(token !== undefined ? { token } : {}) });
    clients.push(client);
    return client;
  }
  const namesOf = (response: DeltaDiscoveryResponse) => response.resources.map((entry) => entry.name);
  const addressesOf = (response: DeltaDiscoveryResponse) =>
    endpointAddresses({ version_info: '', type_url: response.type_url, nonce: response.nonce, resources: response.resources.map((entry) => entry.resource) }, 'backend');

  it('sends a subscribed proxy what it lacks, then only what changed and the names of what is gone', async () => {
    await putDataplane(sidecar('web-delta', '10.0.0.40', 'web', ['backend']));
    const client = connectDelta('default.web-delta', await tokenFor('web-delta'));
    client.request({ typeUrl: TYPE.cluster });
    client.request({ typeUrl: TYPE.listener });
    const clusters = await client.next(TYPE.cluster, 1);
    expect(namesOf(clusters)).toEqual(expect.arrayContaining(['backend', 'localhost:80', 'mesh:envoy:admin']));
    expect(clusters.resources.every((entry) => entry.version !== '')).toBe(true);
    client.answer(clusters);
    client.request({ typeUrl: TYPE.endpoints, subscribe: ['backend'] });
    const endpoints = await client.next(TYPE.endpoints, 1);
    const before = addressesOf(endpoints);
    expect(before).toContain('10.0.0.2:8080');
    client.answer(endpoints);
    const listeners = await client.next(TYPE.listener, 1);
    expect(namesOf(listeners)).toEqual(expect.arrayContaining(['inbound:10.0.0.40:8080', 'outbound:127.0.0.1:10001']));
    client.answer(listeners);

    // A new instance of backend: only its assignment goes, clusters and listeners stay as they are.
    await putDataplane(sidecar('backend-delta', '10.0.0.41', 'backend'));
    const moved = await client.next(TYPE.endpoints, 2);
    expect(namesOf(moved)).toEqual(['backend']);
    expect(addressesOf(moved)).toEqual([...before, '10.0.0.41:8080'].sort());
    client.answer(moved);

    // No longer calling backend: its cluster and outbound listener are removed by name.
    await putDataplane(sidecar('web-delta', '10.0.0.40', 'web', []));
    const removedClusters = await client.next(TYPE.cluster, 2);
    expect(removedClusters.removed_resources).toEqual(['backend']);
    expect(removedClusters.resources).toEqual([]);
    client.answer(removedClusters);
    const removedListeners = await client.next(TYPE.listener, 2);
    expect(removedListeners.removed_resources).toEqual(['outbound:127.0.0.1:10001']);
    client.answer(removedListeners);
    const live = await api('GET', '/meshes/default/dataplanes/web-delta/xds');
    const dumped = live.json.configs.find((config: Record<string, any>) => config['@type'].endsWith('ListenersConfigDump'));
    expect(dumped.versionInfo).toBe(removedListeners.system_version_info);
    expect(JSON.stringify(dumped)).toContain('inbound:10.0.0.40:8080');
    expect(JSON.stringify(dumped)).not.toContain('outbound:127.0.0.1:10001');
    // The proxy still subscribes to backend's endpoints: it hears they are gone too.
    const removedEndpoints = await client.next(TYPE.endpoints, 3);
    expect(removedEndpoints.removed_resources).toEqual(['backend']);
    client.answer(removedEndpoints);
    expect(client.of(TYPE.cluster)).toHaveLength(2);

    const insight = await eventually(
      () => insightOf('web-delta'),
      (overview) => Number(overview?.dataplaneInsight?.subscriptions?.at(-1)?.status?.eds?.responsesAcknowledged ?? 0) >= 3,
      'the ACKs in the insight',
    );
    expect(insight?.dataplaneInsight?.subscriptions?.at(-1)?.status?.cds).toMatchObject({ responsesSent: '2', responsesAcknowledged: '2' });
  });

  it('leaves out what a reconnecting proxy holds, and refuses a proxy without a valid token', async () => {
    const token = await tokenFor('web-delta');
    const first = connectDelta('default.web-delta', token);
    first.request({ typeUrl: TYPE.cluster });
    const all = await first.next(TYPE.cluster, 1);
    first.close();
    const [held, ...rest] = all.resources;
    const again = connectDelta('default.web-delta', token);
    again.request({ typeUrl: TYPE.cluster, initialVersions: { [held!.name]: held!.version } });
    expect(namesOf(await again.next(TYPE.cluster, 1)).sort()).toEqual(rest.map((entry) => entry.name).sort());

    const refused = connectDelta('default.web-delta', 'not-a-jwt');
    refused.request({ typeUrl: TYPE.cluster });
    expect(await refused.ended()).toEqual({ code: 2, details: 'authentication failed: could not parse the token' });
  });
});
