// The meta endpoints: `/`, `/config`, `/versions`, `/policies`, `/who-am-i` (docs/api.md, Meta and insight endpoints).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ResourceManager } from '@mesh/resource-manager';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_ONLY_RULES } from '../access.js';
import { createApiApp } from '../api.js';
import type { ApiContext } from '../context.js';
import { expectJson, startApi, stdError, type TestApi, type TestApiOptions, openTestStore } from '../testing.js';

let api: TestApi | undefined;
let closeServer: (() => Promise<void>) | undefined;
afterEach(async () => {
  await api?.close();
  await closeServer?.();
  api = undefined;
  closeServer = undefined;
});

const start = async (options: TestApiOptions = {}) => (api = await startApi(options));

/**
 * A server over a context with the given configuration and facts (the shared helper fixes both),
 * answering `GET path` as `{status, text, body}`.
 */
async function serveWith(overrides: { effectiveConfig: Record<string, unknown>; mode?: ApiContext['mode'] }) {
  const store = await openTestStore();
  const mode = overrides.mode ?? 'standalone';
  // A cast, so the test keeps compiling while the context grows fields it does not use.
  const ctx = {
    manager: new ResourceManager({ store, mode }),
    mode,
    readOnly: false,
    zoneName: mode === 'zone' ? 'zone-1' : undefined,
    access: { localhostIsAdmin: true, rules: ADMIN_ONLY_RULES },
    corsAllowedDomains: ['.*'],
    logger: { error() {} },
    info: { hostname: 'cp-host', product: 'Mesh', version: '2.5.0', instanceId: '9b2e4c1a-7d3f-4e8a-b6c5-2f1d0e9a8b7c', clusterId: 'c0ffee00-0000-4000-8000-000000000001' },
    effectiveConfig: overrides.effectiveConfig,
  } as unknown as ApiContext;
  const server = createServer(createApiApp(ctx));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeServer = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
  };
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return async (path: string) => {
    const res = await fetch(url + path);
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Record<string, any> };
  };
}

// The contract's catalogue (the contract's catalogue of policy kinds), in its order.
const CATALOGUE = [
  ['CircuitBreaker', 'circuit-breakers', 'Circuit Breakers', 'Circuit Breaker'],
  ['ExternalService', 'external-services', 'External Services', 'External Service'],
  ['FaultInjection', 'fault-injections', 'Fault Injections', 'Fault Injection'],
  ['HealthCheck', 'health-checks', 'Health Checks', 'Health Check'],
  ['MeshGateway', 'meshgateways', 'Mesh Gateways', 'Mesh Gateway'],
  ['MeshGatewayRoute', 'meshgatewayroutes', 'Mesh Gateway Routes', 'Mesh Gateway Route'],
  ['ProxyTemplate', 'proxytemplates', 'Proxy Templates', 'Proxy Template'],
  ['RateLimit', 'rate-limits', 'Rate Limits', 'Rate Limit'],
  ['Retry', 'retries', 'Retries', 'Retry'],
  ['Timeout', 'timeouts', 'Timeouts', 'Timeout'],
  ['TrafficLog', 'traffic-logs', 'Traffic Logs', 'Traffic Log'],
  ['TrafficPermission', 'traffic-permissions', 'Traffic Permissions', 'Traffic Permission'],
  ['TrafficRoute', 'traffic-routes', 'Traffic Routes', 'Traffic Route'],
  ['TrafficTrace', 'traffic-traces', 'Traffic Traces', 'Traffic Trace'],
  ['VirtualOutbound', 'virtual-outbounds', 'Virtual Outbounds', 'Virtual Outbound'],
] as const;

const catalogue = (readOnly: boolean) => ({
  policies: CATALOGUE.map(([name, path, displayName, singularDisplayName]) => ({
    name,
    readOnly,
    path,
    displayName,
    singularDisplayName,
    pluralDisplayName: displayName,
    isExperimental: false,
    isTargetRefBased: false,
    isInbound: false,
    isOutbound: false,
  })),
});

describe('GET /', () => {
  it('describes this control plane, with the GUI address, in the reference key order', async () => {
    const cp = await start();
    expectJson(await cp.get('/'), 200, {
      hostname: 'test-host',
      tagline: 'Mesh',
      product: 'Mesh',
      version: '0.0.0',
      instanceId: '00000000-0000-4000-8000-000000000000',
      clusterId: '',
      gui: '/gui',
    });
  });

  it('announces the GUI on a global control plane but not on a zone one', async () => {
    expect((await (await start({ mode: 'global' })).get('/')).body.gui).toBe('/gui');
    await api!.close();
    const zone = await start({ mode: 'zone', zoneName: 'zone-1' });
    const root = await zone.get('/');
    expect(root.status).toBe(200);
    expect(root.body).not.toHaveProperty('gui');
    expect(root.body.product).toBe('Mesh');
  });

  it('follows apiServer.gui: its root URL first, nothing when the GUI is disabled', async () => {
    const get = await serveWith({ effectiveConfig: { apiServer: { gui: { enabled: true, rootUrl: 'https://cp.example.com/ui', basePath: '/gui' } } } });
    expect((await get('/')).body).toEqual({
      hostname: 'cp-host',
      tagline: 'Mesh',
      product: 'Mesh',
      version: '2.5.0',
      instanceId: '9b2e4c1a-7d3f-4e8a-b6c5-2f1d0e9a8b7c',
      clusterId: 'c0ffee00-0000-4000-8000-000000000001',
      gui: 'https://cp.example.com/ui',
    });
    await closeServer!();
    const disabled = await serveWith({ effectiveConfig: { apiServer: { gui: { enabled: false, rootUrl: '', basePath: '/gui' } } } });
    expect((await disabled('/')).body).not.toHaveProperty('gui');
  });
});

describe('GET /config', () => {
  it('serves the effective configuration as compact JSON with every object key sorted', async () => {
    const get = await serveWith({
      effectiveConfig: {
        store: { type: 'sqlite', postgres: { user: 'mesh', password: '*****', host: '127.0.0.1' } },
        apiServer: { readOnly: false, corsAllowedDomains: ['z.example', '.*'], port: 5681 },
        environment: 'universal',
      },
    });
    const reply = await get('/config');
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(
      '{"apiServer":{"corsAllowedDomains":["z.example",".*"],"port":5681,"readOnly":false},"environment":"universal",' +
        '"store":{"postgres":{"host":"127.0.0.1","password":"*****","user":"mesh"},"type":"sqlite"}}',
    );
  });

  it('sorts keys by code unit, as the reference does', async () => {
    const get = await serveWith({ effectiveConfig: { dnsServer: { serviceVipPort: 80, CIDR: '240.0.0.0/4', domain: 'mesh' } } });
    expect(Object.keys((await get('/config')).body.dnsServer)).toEqual(['CIDR', 'domain', 'serviceVipPort']);
  });
});

describe('GET /versions', () => {
  it('maps data plane versions to the Envoy version they ship with, this release included', async () => {
    const reply = await (await start()).get('/versions');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(reply.body)).toEqual(['meshDp']);
    const entries = Object.entries(reply.body.meshDp as Record<string, unknown>);
    expect(entries.length).toBeGreaterThan(10);
    for (const [, entry] of entries) expect(entry).toEqual({ envoy: expect.stringMatching(/^~?\d+\.\d+\.\d+$/) });
    expect(reply.body.meshDp['1.0.0']).toEqual({ envoy: '1.16.0' });
    expect(reply.body.meshDp['2.5.0']).toEqual({ envoy: '1.28.0' });
  });
});

describe('GET /policies', () => {
  it('lists the contract catalogue, writable, on a standalone control plane', async () => {
    expectJson(await (await start()).get('/policies'), 200, catalogue(false));
  });

  it('is writable on a global control plane', async () => {
    expectJson(await (await start({ mode: 'global' })).get('/policies'), 200, catalogue(false));
  });

  it('is read-only on a zone control plane, which takes policies from its global', async () => {
    expectJson(await (await start({ mode: 'zone', zoneName: 'zone-1' })).get('/policies'), 200, catalogue(true));
  });

  it('is read-only when the API is (apiServer.readOnly, Kubernetes)', async () => {
    const cp = await start({ readOnly: true });
    expectJson(await cp.get('/policies'), 200, catalogue(true));
    // The catalogue tells the truth: a write of a listed kind is refused.
    expect((await cp.put('/meshes/default/timeouts/t-1', { type: 'Timeout', mesh: 'default', name: 't-1' })).status).toBe(405);
  });

  it('answers on a trailing slash and refuses other methods with Allow', async () => {
    const cp = await start();
    expect((await cp.get('/policies/')).body).toEqual(catalogue(false));
    const put = await cp.put('/policies', {});
    expectJson(put, 405, stdError(405, 'Method not Allowed', 'Method not allowed'));
    expect(put.headers.get('allow')).toBe('GET');
  });
});

describe('GET /who-am-i', () => {
  it('names a local caller as the admin', async () => {
    expectJson(await (await start()).get('/who-am-i'), 200, { name: 'mesh-system:admin', groups: ['mesh-system:admin', 'mesh-system:authenticated'] });
  });

  it('names an unauthenticated caller as anonymous when localhost is not admin', async () => {
    expectJson(await (await start({ localhostIsAdmin: false })).get('/who-am-i'), 200, {
      name: 'mesh-system:anonymous',
      groups: ['mesh-system:unauthenticated'],
    });
  });

  it('refuses a bearer token it cannot verify from a caller that is not a local admin', async () => {
    expectJson(
      await (await start({ localhostIsAdmin: false })).get('/who-am-i', { authorization: 'Bearer not-a-token' }),
      401,
      stdError(401, 'Invalid authentication data', 'Unauthenticated'),
    );
  });
});
