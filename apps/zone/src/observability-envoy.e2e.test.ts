// Metrics and TCP access logs as an operator meets them: the zone binary, `mesh-dp` and real
// Envoy. With a prometheus backend on the mesh, each proxy's `/metrics` answers Envoy's stats and
// its application's metrics in one valid exposition; Prometheus discovers the proxies through
// the monitoring assignment server, which answers again when they come and go; a TrafficLog or
// MeshAccessLog with a TCP backend delivers one line per request to a TCP listener, which may go
// away and come back (docs/xds.md).
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { get as httpsGet } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStrictExposition } from './testing/exposition.js';
import { clientDataplane, type DataplaneProcess, eventually, requireEnvoy, startApp, startMeshDataplane } from './testing/envoy.js';
import { freePort, startControlPlane } from './testing/process.js';

const envoy = requireEnvoy('observability-envoy.e2e');

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let cp: Instance;
let madsPort: number;
const servers: Array<Server | TcpServer> = [];
const proxies = new Map<string, DataplaneProcess>();
const metricsPorts = new Map<string, number>();
let webOutboundPort: number;
let appMetricsPort: number;

/**
 * A proxy of `service` with its own metrics port (its `metrics` over the mesh's backend), served
 * over TLS with the runner's certificate when `tls`, and, for a client, an outbound to backend.
 */
const template = (outbound: boolean, tls = false) => `${clientDataplane('{{ service }}', outbound ? { backend: 'outboundPort' } : {})}metrics:
  type: prometheus
  conf:
    port: {{ metricsPort }}
${tls ? '    tls:\n      mode: providedTLS\n' : ''}`;

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${cp.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
};

async function startProxy(name: string, service: string, outboundPort?: number, tlsArgs: string[] = []): Promise<DataplaneProcess> {
  const app = await startApp(service);
  servers.push(app.server);
  const metricsPort = await freePort();
  metricsPorts.set(name, metricsPort);
  const vars = { name, service, port: String(await freePort()), appPort: String(app.port), metricsPort: String(metricsPort), ...(outboundPort ? { outboundPort: String(outboundPort) } : {}) };
  const proxy = await startMeshDataplane(cp, envoy!, template(outboundPort !== undefined, tlsArgs.length > 0), vars, tlsArgs);
  proxies.set(name, proxy);
  return proxy;
}

/** The application's own metrics, in OpenMetrics when the scraper takes it (as client libraries do), else in the Prometheus text format. */
async function startMetricsApp(): Promise<number> {
  const server = createHttpServer((req, res) => {
    const openMetrics = (req.headers.accept ?? '').includes('application/openmetrics-text');
    if (openMetrics) {
      res.writeHead(200, { 'content-type': 'application/openmetrics-text; version=1.0.0; charset=utf-8' });
      res.end('# HELP app_orders Orders taken.\n# TYPE app_orders counter\napp_orders_total{shop="north"} 42\napp_orders_created{shop="north"} 1700000000\n# TYPE envoy_server_live gauge\nenvoy_server_live 7\n# EOF\n');
    } else {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end('# HELP app_orders_total Orders taken.\n# TYPE app_orders_total counter\napp_orders_total{shop="north"} 42\n# TYPE envoy_server_live gauge\nenvoy_server_live 7\n');
    }
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  servers.push(server);
  return port;
}

async function scrape(name: string, accept?: string): Promise<{ status: number; contentType: string; text: string }> {
  const res = await fetch(`http://127.0.0.1:${metricsPorts.get(name)}/metrics`, { headers: accept ? { accept } : {}, signal: AbortSignal.timeout(20_000) });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

interface DiscoveryResponse {
  version_info: string;
  type_url: string;
  resources: Array<{ '@type': string; mesh: string; service: string; labels: Record<string, string>; targets: Array<{ name: string; scheme: string; address: string; metrics_path: string; labels: Record<string, string> }> }>;
}

const TYPE_URL = 'type.googleapis.com/kuma.observability.v1.MonitoringAssignment';

/** A fetch as Prometheus's `kuma_sd_configs` makes it. */
async function discover(versionInfo: string, fetchTimeout: string): Promise<{ status: number; text: string; body?: DiscoveryResponse }> {
  const res = await fetch(`http://127.0.0.1:${madsPort}/v3/discovery:monitoringassignments?fetch-timeout=${fetchTimeout}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ version_info: versionInfo, node: { id: 'prometheus-1' }, resource_names: [], type_url: TYPE_URL }),
  });
  const text = await res.text();
  return { status: res.status, text, ...(res.status === 200 ? { body: JSON.parse(text) as DiscoveryResponse } : {}) };
}

/** The labels Prometheus gives each target of an answer (its kuma_sd conversion). */
function prometheusTargets(body: DiscoveryResponse): Array<Record<string, string>> {
  const userLabels = (labels: Record<string, string>) => Object.fromEntries(Object.entries(labels).map(([key, value]) => [`__meta_kuma_label_${key.replace(/[^a-zA-Z0-9_]/g, '_')}`, value]));
  return body.resources.flatMap((assignment) =>
    assignment.targets.map((target) => ({
      ...userLabels(assignment.labels),
      __meta_kuma_mesh: assignment.mesh,
      __meta_kuma_service: assignment.service,
      ...userLabels(target.labels),
      __meta_kuma_dataplane: target.name,
      __address__: target.address,
      instance: target.name,
      __scheme__: target.scheme,
      __metrics_path__: target.metrics_path,
    })),
  );
}

/** A TCP listener collecting the lines it receives. */
class LineListener {
  readonly lines: string[] = [];
  private server: TcpServer | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(readonly port: number) {}

  async start(): Promise<void> {
    const server = createTcpServer((socket) => {
      this.sockets.add(socket);
      let partial = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        const parts = (partial + chunk).split('\n');
        partial = parts.pop() ?? '';
        this.lines.push(...parts);
      });
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
    servers.push(server);
  }

  /** Stops listening and drops the connections, as a collector that goes away. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

/** Requests through web's outbound to backend, one per path. */
async function callPaths(paths: readonly string[]): Promise<string[]> {
  const answers: string[] = [];
  for (const path of paths) {
    const res = await fetch(`http://127.0.0.1:${webOutboundPort}${path}`, { signal: AbortSignal.timeout(5000) });
    await res.text();
    answers.push(String(res.status));
  }
  return answers;
}

beforeAll(async () => {
  if (!envoy) return;
  madsPort = await freePort();
  cp = await startControlPlane({
    env: {
      MESH_DP_SERVER_PORT: String(await freePort()),
      MESH_MONITORING_ASSIGNMENT_SERVER_PORT: String(madsPort),
      MESH_XDS_SERVER_DATAPLANE_DEREGISTRATION_DELAY: '1s',
    },
  });
  appMetricsPort = await startMetricsApp();
  const mesh = (await api('GET', '/meshes/default')).json;
  const metrics = { enabledBackend: 'prom-1', backends: [{ name: 'prom-1', type: 'prometheus', conf: { aggregate: [{ name: 'app', port: appMetricsPort, path: '/metrics' }] } }] };
  expect((await api('PUT', '/meshes/default', { ...mesh, metrics })).status).toBe(200);
  await startProxy('backend-1', 'backend');
  webOutboundPort = await freePort();
  await startProxy('web-1', 'web', webOutboundPort);
  await eventually(() => callPaths(['/']), (answers) => answers[0] === '200', 'web to reach backend', 60_000);
}, 180_000);

afterAll(async () => {
  await Promise.all([...proxies.values()].map((proxy) => proxy.stop()));
  for (const server of servers) server.close();
  await cp?.stop();
});

describe.skipIf(!envoy)('metrics of proxies run by mesh-dp', () => {
  it("answers a scrape with Envoy's stats and the application's metrics in one valid Prometheus exposition", { timeout: 90_000 }, async () => {
    const answer = await eventually(() => scrape('web-1'), (result) => result.status === 200, "web-1's metrics", 60_000);
    expect(answer.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const families = readStrictExposition(answer.text, 'text');
    // Envoy's own stats, read from its admin.
    expect(families.get('envoy_cluster_upstream_cx_total')?.type).toBe('counter');
    expect(families.get('envoy_server_uptime')?.type).toBe('gauge');
    expect(families.get('envoy_cluster_upstream_cx_connect_ms')?.type).toBe('histogram');
    // The application's, named by the mesh's aggregate entry.
    expect(families.get('app_orders_total')).toEqual({ type: 'counter', help: 'Orders taken.', samples: [{ name: 'app_orders_total', labels: { shop: 'north' }, value: 42 }] });
    // A series both give is there once: the application's.
    expect(families.get('envoy_server_live')?.samples).toEqual([{ name: 'envoy_server_live', labels: {}, value: 7 }]);
  });

  it('answers in OpenMetrics when the application does, with Envoy\'s stats converted to it', { timeout: 60_000 }, async () => {
    const accept = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
    const answer = await eventually(() => scrape('backend-1', accept), (result) => result.status === 200, "backend-1's metrics", 60_000);
    expect(answer.contentType).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    const families = readStrictExposition(answer.text, 'openmetrics');
    expect(families.get('app_orders')?.samples.map((sample) => sample.name)).toEqual(['app_orders_total', 'app_orders_created']);
    // Envoy's counters named `_total` stay counters; the others are of unknown type, as OpenMetrics wants counters to end in `_total`.
    expect(families.get('envoy_cluster_upstream_cx')?.type).toBe('counter');
    expect(families.get('envoy_cluster_upstream_cx_total')).toBeUndefined();
    expect(families.get('envoy_server_uptime')?.type).toBe('gauge');
  });

  it('serves the metrics over TLS with the certificate given to mesh-dp (tls.mode providedTLS)', { timeout: 90_000 }, async () => {
    const certificate = join(cp.workDir, 'mesh-cp.crt');
    const proxy = await startProxy('secure-1', 'secure', undefined, ['--metrics-cert-path', certificate, '--metrics-key-path', join(cp.workDir, 'mesh-cp.key')]);
    const scrapeTls = () =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpsGet({ host: '127.0.0.1', port: metricsPorts.get('secure-1'), path: '/metrics', ca: readFileSync(certificate), timeout: 10_000 }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.on('error', reject);
      });
    const answer = await eventually(scrapeTls, (result) => result.status === 200, "secure-1's metrics over TLS", 60_000);
    expect(readStrictExposition(answer.text, 'text').get('envoy_server_live')).toBeDefined();
    // Prometheus is told to scrape it over https.
    const listed = await discover('', '0s');
    expect(listed.body!.resources.find((resource) => resource.targets[0]?.name === 'secure-1')?.targets[0]).toMatchObject({ scheme: 'https', address: `127.0.0.1:${metricsPorts.get('secure-1')}` });
    await proxy.stop();
    proxies.delete('secure-1');
  });

  it('lists every proxy of the mesh for Prometheus, with its labels, and answers again when a proxy comes and goes', { timeout: 180_000 }, async () => {
    const first = await eventually(
      () => discover('', '0s'),
      (result) => result.body?.resources.map((resource) => resource.targets[0]?.name).join() === 'backend-1,web-1',
      'the two proxies to be listed',
      30_000,
    );
    expect(first.body!.type_url).toBe(TYPE_URL);
    expect(first.body!.resources.every((resource) => resource['@type'] === TYPE_URL)).toBe(true);
    expect(prometheusTargets(first.body!)).toEqual([
      {
        __meta_kuma_mesh: 'default',
        __meta_kuma_service: 'backend',
        __meta_kuma_dataplane: 'backend-1',
        __meta_kuma_label_mesh_io_protocol: 'http',
        __meta_kuma_label_mesh_io_protocols: ',http,',
        __meta_kuma_label_mesh_io_service: 'backend',
        __meta_kuma_label_mesh_io_services: ',backend,',
        __address__: `127.0.0.1:${metricsPorts.get('backend-1')}`,
        instance: 'backend-1',
        __scheme__: 'http',
        __metrics_path__: '/metrics',
      },
      expect.objectContaining({ __meta_kuma_service: 'web', __meta_kuma_dataplane: 'web-1', instance: 'web-1', __address__: `127.0.0.1:${metricsPorts.get('web-1')}` }),
    ]);
    // Prometheus asks again with the version it has: nothing changed, so 304 once the wait is over.
    const unchanged = await discover(first.body!.version_info, '1s');
    expect(unchanged.status).toBe(304);

    // A long poll returns as soon as a proxy joins...
    const joined = discover(first.body!.version_info, '2m');
    const web2 = await startProxy('web-2', 'web', await freePort());
    const afterJoin = await joined;
    expect(afterJoin.status).toBe(200);
    expect(afterJoin.body!.resources.flatMap((resource) => resource.targets.map((target) => target.name))).toEqual(['backend-1', 'web-1', 'web-2']);

    // ...and when it leaves (its Dataplane goes once its stream has closed).
    const left = discover(afterJoin.body!.version_info, '2m');
    await web2.stop();
    proxies.delete('web-2');
    const afterLeave = await left;
    expect(afterLeave.status).toBe(200);
    expect(afterLeave.body!.resources.flatMap((resource) => resource.targets.map((target) => target.name))).toEqual(['backend-1', 'web-1']);
  });

  it('refuses a malformed discovery request with the standard error body', async () => {
    const badTimeout = await discover('', 'soon');
    expect(badTimeout.status).toBe(400);
    expect(JSON.parse(badTimeout.text)).toMatchObject({ type: '/std-errors', status: 400, title: 'Could not parse fetch-timeout' });
    const notJson = await fetch(`http://127.0.0.1:${madsPort}/v3/discovery:monitoringassignments`, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ type: '/std-errors', status: 400, title: 'Could not parse request body' });
    const get = await fetch(`http://127.0.0.1:${madsPort}/v3/discovery:monitoringassignments`);
    expect(get.status).toBe(405);
  });
});

describe.skipIf(!envoy)('access logs to a TCP backend', () => {
  it('delivers one line per request of a TrafficLog in its format, and again after the listener went away and came back', { timeout: 180_000 }, async () => {
    const listener = new LineListener(await freePort());
    await listener.start();
    const mesh = (await api('GET', '/meshes/default')).json;
    const format = '%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %RESPONSE_CODE% %MESH_SOURCE_SERVICE%->%MESH_DESTINATION_SERVICE%';
    const logging = { backends: [{ name: 'tcp-1', type: 'tcp', format, conf: { address: `127.0.0.1:${listener.port}` } }] };
    expect((await api('PUT', '/meshes/default', { ...mesh, logging })).status).toBe(200);
    const trafficLog = { type: 'TrafficLog', mesh: 'default', name: 'web-to-backend', sources: [{ match: { 'mesh.io/service': 'web' } }], destinations: [{ match: { 'mesh.io/service': 'backend' } }], conf: { backend: 'tcp-1' } };
    expect((await api('PUT', '/meshes/default/traffic-logs/web-to-backend', trafficLog)).status).toBe(201);

    // Once the proxy has the log, each request is one line.
    await eventually(
      async () => {
        await callPaths(['/probe']);
        return listener.lines;
      },
      (lines) => lines.includes('GET /probe 200 web->backend'),
      'a first line',
      60_000,
    );
    const paths = ['/log-1', '/log-2', '/log-3'];
    expect(await callPaths(paths)).toEqual(['200', '200', '200']);
    const logged = (path: string) => listener.lines.filter((line) => line === `GET ${path} 200 web->backend`).length;
    await eventually(() => paths.map(logged), (counts) => counts.every((count) => count >= 1), 'a line per request', 60_000);
    expect(paths.map(logged)).toEqual([1, 1, 1]);

    // The collector goes away: once Envoy has written the next lines, mesh-dp finds it gone and keeps them...
    await listener.stop();
    expect(await callPaths(['/away-1', '/away-2'])).toEqual(['200', '200']);
    const gone = `could not send access logs to 127.0.0.1:${listener.port}`;
    await eventually(() => proxies.get('web-1')!.output(), (output) => output.includes(gone), 'mesh-dp to find the collector gone', 60_000);
    // ...and sends them, and the lines after, once it is back.
    await listener.start();
    expect(await callPaths(['/back-1', '/back-2'])).toEqual(['200', '200']);
    const later = ['/away-1', '/away-2', '/back-1', '/back-2'];
    await eventually(() => later.map(logged), (counts) => counts.every((count) => count >= 1), 'the lines after the collector came back', 90_000);
    expect(later.map(logged)).toEqual([1, 1, 1, 1]);
    expect(proxies.get('web-1')!.output()).toContain(`sending access logs to 127.0.0.1:${listener.port} again`);
    expect((await api('DELETE', '/meshes/default/traffic-logs/web-to-backend')).status).toBe(200);
  });

  it('delivers the JSON lines of a MeshAccessLog', { timeout: 120_000 }, async () => {
    const listener = new LineListener(await freePort());
    await listener.start();
    const json = [
      { key: 'path', value: '%REQ(:PATH)%' },
      { key: 'to', value: '%KUMA_DESTINATION_SERVICE%' },
    ];
    const accessLog = {
      type: 'MeshAccessLog',
      mesh: 'default',
      name: 'web-json',
      spec: { targetRef: { kind: 'MeshService', name: 'web' }, to: [{ targetRef: { kind: 'Mesh' }, default: { backends: [{ type: 'Tcp', tcp: { address: `127.0.0.1:${listener.port}`, format: { type: 'Json', json } } }] } }] },
    };
    expect((await api('PUT', '/meshes/default/meshaccesslogs/web-json', accessLog)).status).toBe(201);
    const records = () => listener.lines.map((line) => JSON.parse(line) as { path: string; to: string });
    await eventually(
      async () => {
        await callPaths(['/json-1']);
        return records();
      },
      (lines) => lines.some((line) => line.path === '/json-1'),
      'a JSON line',
      60_000,
    );
    expect(records().find((line) => line.path === '/json-1')).toEqual({ path: '/json-1', to: 'backend' });
  });
});
