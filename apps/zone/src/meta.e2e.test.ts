// End to end: the meta endpoints (`/`, `/config`, `/versions`, `/policies`, `/who-am-i`) of the
// built binaries, and the configuration they show following the environment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, zoneOf, type StartOptions } from './testing/process.js';

type Started = Awaited<ReturnType<typeof startControlPlane>>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function get(cp: Started, path: string) {
  const res = await fetch(`${cp.url}${path}`);
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), text, body: JSON.parse(text) as Record<string, any> };
}

/** Runs `check` against a control plane started for it, then stops it. */
async function withControlPlane(options: StartOptions, check: (cp: Started) => Promise<void>) {
  const cp = await startControlPlane(options);
  try {
    await check(cp);
  } finally {
    await cp.stop();
  }
}

const policiesReadOnly = async (cp: Started) => {
  const { status, body } = await get(cp, '/policies');
  expect(status).toBe(200);
  expect(body.policies).toHaveLength(28);
  return new Set((body.policies as Array<{ readOnly: boolean }>).map((p) => p.readOnly));
};

/** Every object in the value has its keys in sorted order. */
function expectSortedKeys(value: unknown, where = '$'): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) return value.forEach((item, i) => expectSortedKeys(item, `${where}[${i}]`));
  const keys = Object.keys(value);
  expect(keys, where).toEqual([...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  for (const [key, item] of Object.entries(value)) expectSortedKeys(item, `${where}.${key}`);
}

let cp: Started;

beforeAll(async () => {
  cp = await startControlPlane({
    env: {
      MESH_STORE_POSTGRES_PASSWORD: 'hunter2',
      MESH_API_SERVER_CORS_ALLOWED_DOMAINS: 'https://gui.example,https://ops.example',
      MESH_XDS_SERVER_NACK_BACKOFF: '90s',
    },
  });
});

afterAll(async () => {
  await cp?.stop();
});

describe('mesh-zone, standalone', () => {
  it('GET / describes the control plane, where its GUI is and where its API is described', async () => {
    const root = await get(cp, '/');
    expect(root.status).toBe(200);
    expect(root.contentType).toMatch(/^application\/json/);
    expect(Object.keys(root.body)).toEqual(['hostname', 'tagline', 'product', 'version', 'instanceId', 'clusterId', 'gui', 'readOnly', 'openapi', 'docs']);
    expect(root.body).toMatchObject({ tagline: 'Mesh', product: 'Mesh', version: '2.5.0', gui: '/gui', openapi: '/openapi.json', docs: '/docs' });
    expect((await fetch(`${cp.url}/gui`)).status).toBe(200);
    expect(root.body.hostname).toEqual(expect.any(String));
    expect(root.body.instanceId).toMatch(UUID);
    expect(root.body.clusterId).toMatch(UUID);
  });

  it('GET /config shows the values the process runs with, keys sorted, secrets masked', async () => {
    const config = await get(cp, '/config');
    expect(config.status).toBe(200);
    expect(config.text).not.toContain('hunter2');
    expect(config.text).not.toContain('\n');
    expectSortedKeys(config.body);
    expect(config.body).toMatchObject({
      environment: 'universal',
      mode: 'standalone',
      general: { workDir: cp.workDir },
      store: { type: 'sqlite', postgres: { password: '*****' }, kubernetes: { systemNamespace: 'mesh-system' } },
      apiServer: {
        port: cp.ports.http,
        http: { port: cp.ports.http },
        https: { port: cp.ports.https },
        readOnly: false,
        corsAllowedDomains: ['https://gui.example', 'https://ops.example'],
      },
      diagnostics: { serverPort: cp.ports.diagnostics },
      xdsServer: { nackBackoff: '1m30s', diagnosticsPort: cp.ports.diagnostics },
      defaults: { skipMeshCreation: false },
      reports: { enabled: false },
    });
    for (const key of ['adminServer', 'bootstrapServer', 'dataplaneTokenServer', 'discovery', 'guiServer', 'monitoringAssignmentServer', 'runtime', 'sdsServer']) {
      expect(config.body).toHaveProperty(key);
    }
    expect(config.body.defaults.mesh).toContain('type: Mesh');
  });

  it('GET /versions lists this release among the supported data plane versions', async () => {
    const [versions, root] = await Promise.all([get(cp, '/versions'), get(cp, '/')]);
    expect(versions.status).toBe(200);
    expect(versions.body.meshDp[root.body.version]).toEqual({ envoy: expect.any(String) });
  });

  it('GET /policies lists the catalogue as writable', async () => {
    const { body } = await get(cp, '/policies');
    expect(body.policies.map((p: { name: string }) => p.name)).toEqual([
      'CircuitBreaker',
      'ExternalService',
      'FaultInjection',
      'HealthCheck',
      'MeshAccessLog',
      'MeshCircuitBreaker',
      'MeshFaultInjection',
      'MeshGateway',
      'MeshGatewayRoute',
      'MeshHTTPRoute',
      'MeshHealthCheck',
      'MeshLoadBalancingStrategy',
      'MeshProxyPatch',
      'MeshRateLimit',
      'MeshRetry',
      'MeshTCPRoute',
      'MeshTimeout',
      'MeshTrace',
      'MeshTrafficPermission',
      'ProxyTemplate',
      'RateLimit',
      'Retry',
      'Timeout',
      'TrafficLog',
      'TrafficPermission',
      'TrafficRoute',
      'TrafficTrace',
      'VirtualOutbound',
    ]);
    expect(body.policies[0]).toEqual({
      name: 'CircuitBreaker',
      readOnly: false,
      path: 'circuit-breakers',
      displayName: 'Circuit Breakers',
      singularDisplayName: 'Circuit Breaker',
      pluralDisplayName: 'Circuit Breakers',
      isExperimental: false,
      isTargetRefBased: false,
      isInbound: false,
      isOutbound: false,
    });
    expect(body.policies.find((p: { name: string }) => p.name === 'MeshTimeout')).toMatchObject({ path: 'meshtimeouts', isTargetRefBased: true, isInbound: true, isOutbound: true });
    expect(await policiesReadOnly(cp)).toEqual(new Set([false]));
  });

  it('GET /who-am-i names a local caller as the admin', async () => {
    expect((await get(cp, '/who-am-i')).body).toEqual({ name: 'mesh-system:admin', groups: ['mesh-system:admin', 'mesh-system:authenticated'] });
  });
});

describe('mesh-zone, other configurations', () => {
  it('with MESH_API_SERVER_READ_ONLY=true every policy kind is read-only', async () => {
    await withControlPlane({ env: { MESH_API_SERVER_READ_ONLY: 'true' } }, async (readOnly) => {
      expect(await policiesReadOnly(readOnly)).toEqual(new Set([true]));
      expect((await get(readOnly, '/config')).body.apiServer.readOnly).toBe(true);
    });
  });

  it('as a zone control plane: its own GUI, policies read-only', async () => {
    await withControlPlane({ binary: 'mesh-global' }, (global) => withControlPlane({ env: zoneOf(global, 'zone-1') }, async (zone) => {
      const root = await get(zone, '/');
      expect(root.body).toMatchObject({ product: 'Mesh', version: '2.5.0', gui: '/gui' });
      expect((await fetch(`${zone.url}/gui/meshes`)).status).toBe(200);
      expect(await policiesReadOnly(zone)).toEqual(new Set([true]));
      expect((await get(zone, '/config')).body).toMatchObject({ mode: 'zone', multizone: { zone: { name: 'zone-1' } } });
    }));
  });
});

describe('mesh-global', () => {
  it('serves the same meta endpoints, policies writable', async () => {
    await withControlPlane({ binary: 'mesh-global' }, async (global) => {
      const root = await get(global, '/');
      expect(root.status).toBe(200);
      expect(root.body).toMatchObject({ tagline: 'Mesh', product: 'Mesh', version: '2.5.0', gui: '/gui', openapi: '/openapi.json' });
      expect((await fetch(`${global.url}/gui/zones`)).status).toBe(200);
      expect(root.body.instanceId).toMatch(UUID);
      expect(await policiesReadOnly(global)).toEqual(new Set([false]));
      expect((await get(global, '/config')).body).toMatchObject({ mode: 'global', apiServer: { port: global.ports.http } });
      expect((await get(global, '/who-am-i')).body.name).toBe('mesh-system:admin');
    });
  });
});
