// A proxyless gRPC client (`@grpc/grpc-js-xds`) resolving `xds:///greeter` through the data plane
// server of the real binary: two gRPC servers registered as dataplanes of one service share the
// calls, and a TrafficRoute split sends them where it says.
import { credentials, Server, ServerCredentials, type ServiceDefinition, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './testing/envoy.js';
import { freePort, startControlPlane } from './testing/process.js';

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

/** One unary method, bytes in and out: no .proto needed. */
const GREETER: ServiceDefinition = {
  who: {
    path: '/test.Greeter/Who',
    requestStream: false,
    responseStream: false,
    requestSerialize: (value: Buffer) => value,
    requestDeserialize: (bytes: Buffer) => bytes,
    responseSerialize: (value: Buffer) => value,
    responseDeserialize: (bytes: Buffer) => bytes,
  },
};

type GreeterClient = { who(request: Buffer, callback: (error: ServiceError | null, response?: Buffer) => void): void; close(): void };

let cp: Instance;
const servers: Server[] = [];
let client: GreeterClient | undefined;

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${cp.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, text: await res.text() };
};

async function startGreeter(name: string): Promise<number> {
  const server = new Server();
  server.addService(GREETER, { who: (_call: unknown, callback: (error: null, response: Buffer) => void) => callback(null, Buffer.from(name)) });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  servers.push(server);
  return port;
}

const dataplane = (name: string, port: number, tags: Record<string, string>) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: { address: '127.0.0.1', inbound: [{ port, tags: { 'mesh.io/protocol': 'grpc', ...tags } }] },
});

const call = (greeter: GreeterClient): Promise<string> =>
  new Promise((resolve) => greeter.who(Buffer.from('hi'), (error, response) => resolve(error ? `error: ${error.message}` : String(response))));

async function callTimes(greeter: GreeterClient, times: number): Promise<string[]> {
  const answers: string[] = [];
  for (let i = 0; i < times; i++) answers.push(await call(greeter));
  return answers;
}

beforeAll(async () => {
  const dpPort = await freePort();
  // gRPC's xDS client speaks plain text only (no channel credentials but `insecure`).
  cp = await startControlPlane({ env: { MESH_DP_SERVER_PORT: String(dpPort), MESH_DP_SERVER_TLS_ENABLED: 'false' } });
  for (const [name, version] of [['greeter-1', 'v1'], ['greeter-2', 'v2']] as const) {
    const port = await startGreeter(name);
    expect((await api('PUT', `/meshes/default/dataplanes/${name}`, dataplane(name, port, { 'mesh.io/service': 'greeter', version }))).status).toBe(201);
  }
  const token = (await api('POST', '/tokens/dataplane', { name: 'client-1', mesh: 'default', validFor: '1h' })).text;
  // The client registers itself, and authenticates through its node metadata (it cannot attach call credentials).
  const resource = JSON.stringify(dataplane('client-1', 1, { 'mesh.io/service': 'client' }));
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify({
    xds_servers: [{ server_uri: `127.0.0.1:${dpPort}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: { id: 'default.client-1', locality: {}, metadata: { 'dataplane.token': token, 'dataplane.resource': resource } },
  });
  const xds = await import('@grpc/grpc-js-xds');
  xds.register();
  const Client = makeGenericClientConstructor(GREETER, 'Greeter') as unknown as new (target: string, creds: ReturnType<typeof credentials.createInsecure>) => GreeterClient;
  client = new Client('xds:///greeter', credentials.createInsecure());
}, 60_000);

afterAll(async () => {
  client?.close();
  for (const server of servers) server.forceShutdown();
  await cp?.stop();
});

describe('a proxyless gRPC client on xds:///<service>', () => {
  it('resolves the service to its dataplanes and spreads calls over both', async () => {
    const answers = await eventually(
      () => callTimes(client!, 20),
      (values) => values.includes('greeter-1') && values.includes('greeter-2'),
      'calls to reach both greeters',
      30_000,
    );
    expect(answers.every((answer) => answer === 'greeter-1' || answer === 'greeter-2')).toBe(true);
    const overview = JSON.parse((await api('GET', '/meshes/default/dataplanes+insights/client-1')).text);
    expect(overview.dataplaneInsight.subscriptions.at(-1).connectTime).toEqual(expect.any(String));
  });

  it('honours a TrafficRoute split', async () => {
    const split = (weights: [number, number]) => ({
      type: 'TrafficRoute',
      mesh: 'default',
      name: 'client-to-greeter',
      sources: [{ match: { 'mesh.io/service': 'client' } }],
      destinations: [{ match: { 'mesh.io/service': 'greeter' } }],
      conf: {
        split: [
          { weight: weights[0], destination: { 'mesh.io/service': 'greeter', version: 'v1' } },
          { weight: weights[1], destination: { 'mesh.io/service': 'greeter', version: 'v2' } },
        ],
      },
    });
    expect((await api('PUT', '/meshes/default/traffic-routes/client-to-greeter', split([0, 100]))).status).toBe(201);
    await eventually(() => callTimes(client!, 10), (answers) => answers.every((answer) => answer === 'greeter-2'), 'all calls on greeter-2');
    expect((await api('PUT', '/meshes/default/traffic-routes/client-to-greeter', split([100, 0]))).status).toBe(200);
    await eventually(() => callTimes(client!, 10), (answers) => answers.every((answer) => answer === 'greeter-1'), 'all calls on greeter-1');
  });
});
