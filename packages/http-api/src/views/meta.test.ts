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

// The catalogue of the source/destination and selector policy kinds and the reference's targetRef kinds, in name order;
// a targetRef kind is inbound when it has `from` entries, outbound when it has `to` entries.
const TARGET_REF = { isTargetRefBased: true, isInbound: false, isOutbound: false };
const INBOUND = { ...TARGET_REF, isInbound: true };
const OUTBOUND = { ...TARGET_REF, isOutbound: true };
const BOTH = { ...TARGET_REF, isInbound: true, isOutbound: true };
const CATALOGUE: Array<[name: string, path: string, displayName: string, singularDisplayName: string, flags?: typeof TARGET_REF]> = [
  ['CircuitBreaker', 'circuit-breakers', 'Circuit Breakers', 'Circuit Breaker'],
  ['ExternalService', 'external-services', 'External Services', 'External Service'],
  ['FaultInjection', 'fault-injections', 'Fault Injections', 'Fault Injection'],
  ['HealthCheck', 'health-checks', 'Health Checks', 'Health Check'],
  ['MeshAccessLog', 'meshaccesslogs', 'Mesh Access Logs', 'Mesh Access Log', BOTH],
  ['MeshCircuitBreaker', 'meshcircuitbreakers', 'Mesh Circuit Breakers', 'Mesh Circuit Breaker', BOTH],
  ['MeshFaultInjection', 'meshfaultinjections', 'Mesh Fault Injections', 'Mesh Fault Injection', INBOUND],
  ['MeshGateway', 'meshgateways', 'Mesh Gateways', 'Mesh Gateway'],
  ['MeshGatewayRoute', 'meshgatewayroutes', 'Mesh Gateway Routes', 'Mesh Gateway Route'],
  ['MeshHTTPRoute', 'meshhttproutes', 'Mesh HTTP Routes', 'Mesh HTTP Route', OUTBOUND],
  ['MeshHealthCheck', 'meshhealthchecks', 'Mesh Health Checks', 'Mesh Health Check', OUTBOUND],
  ['MeshLoadBalancingStrategy', 'meshloadbalancingstrategies', 'Mesh Load Balancing Strategies', 'Mesh Load Balancing Strategy', OUTBOUND],
  ['MeshProxyPatch', 'meshproxypatches', 'Mesh Proxy Patches', 'Mesh Proxy Patch', TARGET_REF],
  ['MeshRateLimit', 'meshratelimits', 'Mesh Rate Limits', 'Mesh Rate Limit', INBOUND],
  ['MeshRetry', 'meshretries', 'Mesh Retries', 'Mesh Retry', OUTBOUND],
  ['MeshTCPRoute', 'meshtcproutes', 'Mesh TCP Routes', 'Mesh TCP Route', OUTBOUND],
  ['MeshTimeout', 'meshtimeouts', 'Mesh Timeouts', 'Mesh Timeout', BOTH],
  ['MeshTrace', 'meshtraces', 'Mesh Traces', 'Mesh Trace', TARGET_REF],
  ['MeshTrafficPermission', 'meshtrafficpermissions', 'Mesh Traffic Permissions', 'Mesh Traffic Permission', INBOUND],
  ['ProxyTemplate', 'proxytemplates', 'Proxy Templates', 'Proxy Template'],
  ['RateLimit', 'rate-limits', 'Rate Limits', 'Rate Limit'],
  ['Retry', 'retries', 'Retries', 'Retry'],
  ['Timeout', 'timeouts', 'Timeouts', 'Timeout'],
  ['TrafficLog', 'traffic-logs', 'Traffic Logs', 'Traffic Log'],
  ['TrafficPermission', 'traffic-permissions', 'Traffic Permissions', 'Traffic Permission'],
  ['TrafficRoute', 'traffic-routes', 'Traffic Routes', 'Traffic Route'],
  ['TrafficTrace', 'traffic-traces', 'Traffic Traces', 'Traffic Trace'],
  ['VirtualOutbound', 'virtual-outbounds', 'Virtual Outbounds', 'Virtual Outbound'],
];

const catalogue = (readOnly: boolean) => ({
  policies: CATALOGUE.map(([name, path, displayName, singularDisplayName, flags]) => ({
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
    ...flags,
  })),
});

describe('GET /', () => {
  it('describes this control plane in the reference key order, then where the API is described', async () => {
    const cp = await start();
    expectJson(await cp.get('/'), 200, {
      hostname: 'test-host',
      tagline: 'Mesh',
      product: 'Mesh',
      version: '0.0.0',
      instanceId: '00000000-0000-4000-8000-000000000000',
      clusterId: '',
      readOnly: false,
      openapi: '/openapi.json',
      docs: '/docs',
    });
  });

  // The GUI reads it to offer no edit a read-only API would refuse (docs/gui.md, Editing).
  it('says whether the API refuses every write', async () => {
    const readOnly = await start({ readOnly: true });
    expect((await readOnly.get('/')).body.readOnly).toBe(true);
    expect((await readOnly.put('/meshes/shop', { type: 'Mesh', name: 'shop' })).status).toBe(405);
  });

  // Where no GUI is served none is announced: the reference's `gui` key would point at a 404 (src/gui.test.ts serves one).
  it('announces no GUI in any mode when none is served', async () => {
    for (const options of [{ mode: 'global' }, { mode: 'zone', zoneName: 'zone-1' }] as const) {
      const root = await (await start(options)).get('/');
      expect(root.status).toBe(200);
      expect(root.body).not.toHaveProperty('gui');
      expect(root.body.product).toBe('Mesh');
      await api!.close();
      api = undefined;
    }
  });

  it('announces no GUI from the configuration alone, without one to serve', async () => {
    const get = await serveWith({ effectiveConfig: { apiServer: { gui: { enabled: true, rootUrl: 'https://cp.example.com/ui', basePath: '/gui' } } } });
    const root = await get('/');
    expect(root.body).not.toHaveProperty('gui');
    expect(root.body).toMatchObject({ hostname: 'cp-host', version: '2.5.0', clusterId: 'c0ffee00-0000-4000-8000-000000000001' });
    expect((await get('/gui')).status).toBe(404);
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
  it('lists the catalogue of the older policy kinds and the targetRef kinds, writable, on a standalone control plane', async () => {
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
