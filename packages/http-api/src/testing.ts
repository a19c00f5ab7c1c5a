// Test support for the REST layer's behaviour tests: a real server on a free port over an
// in-memory store, a small fetch client, and a snapshot of everything stored. Not exported from
// index.ts; only the *.test.ts files beside it use it.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KINDS, type Mode } from '@mesh/model';
import { expect, inject } from 'vitest';
import { generateSigningKeyData, registerCaHooks } from '@mesh/pki';
import { ResourceManager } from '@mesh/resource-manager';
import type { ResourceStore } from '@mesh/store';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { PostgresResourceStore } from '@mesh/store-postgres';
import { createDatabase } from '@mesh/store-postgres/testing';
import { InsightAggregator } from '@mesh/insights';
import { ProxyConfigService } from '@mesh/proxy-config';
import { generate } from 'selfsigned';
import { bootstrapTokens, keyName, keyPlace, registerSigningKeyHooks, SigningKeys, TokenService, type KeyPlace } from '@mesh/tokens';
import { ADMIN_ONLY_RULES } from './access.js';
import { createApiApp } from './api.js';
import type { ApiContext } from './context.js';
import type { ChangeStreamOptions } from './events/hub.js';
import type { GuiOptions } from './gui.js';
import { guardConnections, type ApiLimits } from './limits.js';

export interface TestApiOptions {
  mode?: Mode;
  readOnly?: boolean;
  zoneName?: string;
  localhostIsAdmin?: boolean;
  corsAllowedDomains?: string[];
  /** Creates mesh `default` with its default policies (true unless told otherwise). */
  defaultMesh?: boolean;
  effectiveConfig?: Record<string, unknown>;
  limits?: Partial<ApiLimits>;
  changeStream?: Partial<ChangeStreamOptions>;
  gui?: GuiOptions;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body; undefined when it is empty or not JSON. */
  body: any;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is; `body` is JSON-encoded otherwise. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** The Content-Type of a body: application/json unless told; null sends none. */
  contentType?: string | null;
}

export interface TestApi {
  url: string;
  /** The context the API was built from (for `createRouteTable`). */
  ctx: ApiContext;
  manager: ResourceManager;
  /** The store with its writes, for setups the API cannot make (what an older version stored, insights). */
  store: ResourceStore;
  /** Moves the store's clock on (every write is stamped with the clock's time). */
  advanceClock(ms: number): void;
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
  put(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply>;
  del(path: string, headers?: Record<string, string>): Promise<Reply>;
  /** Every stored resource, as `type mesh/name version spec`, sorted: compare before and after. */
  snapshot(): Promise<string[]>;
  close(): Promise<void>;
}

/** The store clock starts here, on a whole second, so timestamps show `.000Z` until moved. */
export const CLOCK_START = new Date('2024-05-06T07:08:09.000Z');

/**
 * A store for one test: SQLite in memory, or, in the test project that runs this suite against
 * PostgreSQL (vitest.config.ts), a new database on the server that project started.
 */
export async function openTestStore(now?: () => Date): Promise<ResourceStore> {
  const postgres = inject('postgres');
  if (!postgres) return new SqliteResourceStore({ path: ':memory:', ...(now ? { now } : {}) });
  return PostgresResourceStore.open({ ...postgres, database: await createDatabase(postgres), ...(now ? { now } : {}) });
}

/**
 * Each test's control plane starts with the signing keys it would generate (an RSA key pair takes
 * a few hundred milliseconds): generated once per test file, then written into every new store,
 * where the start finds them and keeps them.
 */
let presetKeys: Promise<Map<string, string>> | undefined;

async function presetSigningKeys(store: ResourceStore, mode: Mode, defaultMesh: boolean): Promise<void> {
  const places: KeyPlace[] = [
    ...(defaultMesh ? [keyPlace('dataplane', 'default')] : []),
    keyPlace('user'),
    ...(mode !== 'zone' ? [keyPlace('zoneIngress'), keyPlace('zone')] : []),
  ];
  presetKeys ??= Promise.all(
    [keyPlace('dataplane', 'default'), keyPlace('user'), keyPlace('zoneIngress'), keyPlace('zone')].map(async (place) => [place.prefix, await generateSigningKeyData()] as const),
  ).then((entries) => new Map(entries));
  const keys = await presetKeys;
  await store.createMissing(places.map((place) => ({ type: place.kind.name, mesh: place.mesh, name: keyName(place, 1), spec: JSON.stringify({ data: keys.get(place.prefix) }) })));
}

/** fetch always sends the URL's host as `Host`; node:http sends the one given, as a browser visiting a rebound DNS name would. */
function sendWithHost(url: string, method: string, headers: Record<string, string>, body: string | Buffer | undefined): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const answered = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') answered.set(name, value);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode!, headers: answered }));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function startApi(options: TestApiOptions = {}): Promise<TestApi> {
  let now = CLOCK_START.getTime();
  const store = await openTestStore(() => new Date(now));
  const mode = options.mode ?? 'standalone';
  await presetSigningKeys(store, mode, options.defaultMesh ?? true);
  const manager = new ResourceManager({ store, mode, apiReadOnly: options.readOnly ?? false, ...(options.zoneName !== undefined ? { zoneName: options.zoneName } : {}) });
  registerCaHooks(manager);
  registerSigningKeyHooks(manager);
  if (options.defaultMesh ?? true) await manager.ensureDefaultMesh();
  // As the control plane is composed: the manager writes, every other part reads.
  const reader = manager.reader;
  const keys = new SigningKeys(reader);
  const tokens = new TokenService({ keys, now: () => new Date(now) });
  await bootstrapTokens({ manager, keys, tokens, mode, bootstrapAdminToken: true });
  const insights = new InsightAggregator({ store: reader, now: () => new Date(now) });
  await insights.start();
  const proxyConfigs = new ProxyConfigService({ store: reader, ...(options.zoneName !== undefined ? { localZone: options.zoneName } : {}) });
  await proxyConfigs.start();
  const ctx: ApiContext = {
    manager,
    mode,
    zoneName: options.zoneName,
    access: { localhostIsAdmin: options.localhostIsAdmin ?? true, rules: ADMIN_ONLY_RULES, tokens },
    corsAllowedDomains: options.corsAllowedDomains ?? ['.*'],
    logger: { error() {} },
    info: { hostname: 'test-host', product: 'Mesh', version: '0.0.0', instanceId: '00000000-0000-4000-8000-000000000000', clusterId: '' },
    effectiveConfig: options.effectiveConfig ?? {},
    insights,
    proxyConfigs,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.changeStream ? { changeStream: options.changeStream } : {}),
    ...(options.gui ? { gui: options.gui } : {}),
  };
  const api = createApiApp(ctx);
  const server: Server = createServer(api.serverOptions, api);
  guardConnections(server);
  // The test's fetch shares this process: a test that keeps its thread busy past the server's
  // keep-alive (5 s by default, on a loaded machine) would have fetch reuse a connection that the
  // server closes as the request arrives. Idle connections go when the server closes.
  server.keepAliveTimeout = 10 * 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const request = async (method: string, path: string, req: RequestOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...req.headers };
    let body: string | Buffer | undefined = req.raw;
    if (body === undefined && req.body !== undefined) body = JSON.stringify(req.body);
    const contentType = req.contentType === undefined ? 'application/json' : req.contentType;
    if (body !== undefined && contentType !== null) headers['content-type'] = contentType;
    // A Buffer body makes fetch send no Content-Type of its own.
    if (body !== undefined && contentType === null && typeof body === 'string') body = Buffer.from(body);
    const response = 'host' in headers ? await sendWithHost(url + path, method, headers, body) : await fetch(url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  };

  return {
    url,
    ctx,
    manager,
    store,
    advanceClock(ms) {
      now += ms;
    },
    request,
    get: (path, headers) => request('GET', path, { ...(headers ? { headers } : {}) }),
    put: (path, body, headers) => request('PUT', path, { body, ...(headers ? { headers } : {}) }),
    del: (path, headers) => request('DELETE', path, { ...(headers ? { headers } : {}) }),
    async snapshot() {
      const lines: string[] = [];
      for (const kind of KINDS) {
        const { items } = await store.list({ type: kind.name, offset: 0, size: 0 });
        for (const r of items) lines.push(`${r.type} ${r.mesh}/${r.name} v${r.version} ${r.modificationTime} ${r.spec}`);
      }
      return lines.sort();
    },
    async close() {
      api.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await insights.stop();
      await proxyConfigs.stop();
      await store.close();
    },
  };
}

/** The standard error body (docs/api.md, Errors), in its key order. */
export function stdError(status: number, title: string, detail: string, violations: Array<[field: string, message: string]> = []) {
  if (violations.length === 0) return { type: '/std-errors', status, title, detail, details: detail };
  return {
    type: '/std-errors',
    status,
    title,
    detail,
    invalid_parameters: violations.map(([field, reason]) => ({ field, reason })),
    details: detail,
    causes: violations.map(([field, message]) => ({ field, message })),
  };
}

/**
 * Asserts a JSON reply: status, `application/json`, and the body with its key order (key order
 * is part of what the API promises, and `toEqual` ignores it).
 */
export function expectJson(reply: Reply, status: number, body: unknown): void {
  expect({ status: reply.status, body: reply.body }).toEqual({ status, body });
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  expect(JSON.stringify(reply.body)).toBe(JSON.stringify(body));
}

/** `Resource is not valid` under `title`, one entry per violation. */
export const invalid = (title: string, ...violations: Array<[string, string]>) => stdError(400, title, 'Resource is not valid', violations);

// Bodies used across the tests.
export const trafficRoute = (name: string, mesh = 'default', extra: Record<string, unknown> = {}) => ({
  type: 'TrafficRoute',
  mesh,
  name,
  sources: [{ match: { 'mesh.io/service': '*' } }],
  destinations: [{ match: { 'mesh.io/service': '*' } }],
  conf: { destination: { 'mesh.io/service': '*' } },
  ...extra,
});

export const dataplane = (
  name: string,
  options: { mesh?: string; tags?: Record<string, string>; inbounds?: Array<Record<string, string>>; gateway?: { tags: Record<string, string>; type?: 'BUILTIN' | 'DELEGATED' } } = {},
) => {
  const mesh = options.mesh ?? 'default';
  const networking: Record<string, unknown> = { address: '10.0.0.1' };
  if (options.gateway) networking.gateway = options.gateway;
  else {
    const inbounds = options.inbounds ?? [options.tags ?? { 'mesh.io/service': name }];
    networking.inbound = inbounds.map((tags, i) => ({ port: 8080 + i, tags }));
  }
  return { type: 'Dataplane', mesh, name, networking };
};

export const externalService = (name: string, tags: Record<string, string>, mesh = 'default') => ({
  type: 'ExternalService',
  mesh,
  name,
  networking: { address: 'example.com:443' },
  tags,
});

const ALL = [{ match: { 'mesh.io/service': '*' } }];
const TO_BACKEND = [{ match: { 'mesh.io/service': 'backend' } }];

/** A valid spec of every mesh-scoped kind, with the kind's collection segment. */
export const MESH_SCOPED_EXAMPLES: Array<{ type: string; path: string; spec: Record<string, unknown> }> = [
  { type: 'Dataplane', path: 'dataplanes', spec: { networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }] } } },
  { type: 'HealthCheck', path: 'health-checks', spec: { sources: ALL, destinations: TO_BACKEND, conf: { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 } } },
  { type: 'TrafficPermission', path: 'traffic-permissions', spec: { sources: ALL, destinations: ALL } },
  { type: 'TrafficLog', path: 'traffic-logs', spec: { sources: ALL, destinations: ALL, conf: { backend: 'file' } } },
  { type: 'TrafficRoute', path: 'traffic-routes', spec: { sources: ALL, destinations: TO_BACKEND, conf: { destination: { 'mesh.io/service': 'backend' } } } },
  { type: 'TrafficTrace', path: 'traffic-traces', spec: { selectors: ALL, conf: { backend: 'zipkin' } } },
  {
    type: 'FaultInjection',
    path: 'fault-injections',
    spec: { sources: ALL, destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' } }], conf: { delay: { percentage: 50, value: '0.100s' } } },
  },
  { type: 'Retry', path: 'retries', spec: { sources: ALL, destinations: TO_BACKEND, conf: { http: { numRetries: 3, perTryTimeout: '2s' } } } },
  { type: 'Timeout', path: 'timeouts', spec: { sources: ALL, destinations: TO_BACKEND, conf: { connectTimeout: '5s' } } },
  { type: 'ProxyTemplate', path: 'proxytemplates', spec: { selectors: TO_BACKEND, conf: { imports: ['default-proxy'] } } },
  { type: 'CircuitBreaker', path: 'circuit-breakers', spec: { sources: ALL, destinations: TO_BACKEND, conf: { thresholds: { maxConnections: 2 } } } },
  { type: 'RateLimit', path: 'rate-limits', spec: { sources: ALL, destinations: TO_BACKEND, conf: { http: { requests: 100, interval: '10s' } } } },
  {
    type: 'VirtualOutbound',
    path: 'virtual-outbounds',
    spec: { selectors: ALL, conf: { host: '{{.svc}}.mesh', port: '80', parameters: [{ name: 'svc', tagKey: 'mesh.io/service' }] } },
  },
  { type: 'MeshGateway', path: 'meshgateways', spec: { selectors: [{ match: { 'mesh.io/service': 'edge' } }], conf: { listeners: [{ port: 8080, protocol: 'HTTP' }] } } },
  {
    type: 'MeshGatewayRoute',
    path: 'meshgatewayroutes',
    spec: { selectors: [{ match: { 'mesh.io/service': 'edge' } }], conf: { tcp: { rules: [{ backends: [{ weight: 1, destination: { 'mesh.io/service': 'backend' } }] }] } } },
  },
  { type: 'ExternalService', path: 'external-services', spec: { networking: { address: 'example.com:443' }, tags: { 'mesh.io/service': 'example' } } },
  { type: 'Secret', path: 'secrets', spec: { data: 'c2VjcmV0' } },
];

/** A mesh that brings no default policies, so lists hold only what a test puts there. */
export const emptyMesh = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'Mesh', name, skipCreatingInitialPolicies: ['*'], ...extra });

export const secret = (name: string, data: string, mesh = 'default') => ({ type: 'Secret', mesh, name, data: Buffer.from(data).toString('base64') });

/** A CA certificate and key in PEM, as a `provided` mTLS backend needs. */
export async function generateCa(): Promise<{ cert: string; key: string }> {
  const pems = await generate([{ name: 'commonName', value: 'test-ca' }], {
    keySize: 2048,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}
