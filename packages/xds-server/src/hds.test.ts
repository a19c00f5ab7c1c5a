// Health from the control plane (docs/xds.md): the checks a dataplane's Envoy is given, and what
// its reports do to the stored dataplane.
import { EventEmitter } from 'node:events';
import { dataplaneKind, type DataplaneSpec } from '@mesh/model';
import { registerCaHooks } from '@mesh/pki';
import { ResourceManager } from '@mesh/resource-manager';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { registerSigningKeyHooks, SigningKeys, TokenService } from '@mesh/tokens';
import { afterEach, describe, expect, it } from 'vitest';
import { Authenticator } from './auth.js';
import { decodeMessage, encodeMessage } from './envoy-protos.js';
import { ENVOY_ADMIN_CLUSTER, HdsServer, type HdsSettings, type HealthCheckSpecifier, healthCheckSpecifier, type HealthStreamMessage, reportedHealth, withReportedHealth } from './hds.js';
import type { AdsCall } from './transport.js';

const SETTINGS: HdsSettings = {
  enabled: true,
  intervalMs: 5000,
  refreshIntervalMs: 10_000,
  checkDefaults: { timeoutMs: 2000, intervalMs: 1000, noTrafficIntervalMs: 1000, healthyThreshold: 1, unhealthyThreshold: 1 },
};

const dataplane = (inbound: unknown[]): DataplaneSpec => dataplaneKind.schema.parse({ networking: { address: '10.0.0.1', inbound } });

const BACKEND = dataplane([
  { port: 10001, servicePort: 8080, serviceProbe: { interval: '3s', timeout: '500ms', unhealthyThreshold: 4, tcp: {} }, tags: { 'mesh.io/service': 'backend' } },
  { port: 10002, serviceAddress: '192.168.0.7', servicePort: 9090, tags: { 'mesh.io/service': 'backend-admin' } },
  { port: 10003, tags: { 'mesh.io/service': 'backend-direct' } },
]);

const report = (clusters: Record<string, string[]>): NonNullable<HealthStreamMessage['endpoint_health_response']> => ({
  cluster_endpoints_health: Object.entries(clusters).map(([cluster_name, statuses]) => ({
    cluster_name,
    locality_endpoints_health: [{ endpoints_health: statuses.map((health_status) => ({ health_status })) }],
  })),
});

describe('healthCheckSpecifier', () => {
  it("checks Envoy's readiness and each inbound's application: the probe's settings, else a TCP connect with the defaults", () => {
    const specifier = healthCheckSpecifier(BACKEND, { address: '127.0.0.1', portValue: 9901 }, SETTINGS);
    const defaults = { timeout: '2s', interval: '1s', noTrafficInterval: '1s', healthyThreshold: 1, unhealthyThreshold: 1 };
    expect(specifier).toEqual({
      interval: '5s',
      clusterHealthChecks: [
        {
          clusterName: ENVOY_ADMIN_CLUSTER,
          healthChecks: [{ ...defaults, httpHealthCheck: { path: '/ready' } }],
          localityEndpoints: [{ endpoints: [{ address: { socketAddress: { address: '127.0.0.1', portValue: 9901 } } }] }],
        },
        {
          clusterName: 'inbound_app:10.0.0.1:8080',
          healthChecks: [{ timeout: '0.500s', interval: '3s', noTrafficInterval: '1s', healthyThreshold: 1, unhealthyThreshold: 4, tcpHealthCheck: {} }],
          localityEndpoints: [{ endpoints: [{ address: { socketAddress: { address: '10.0.0.1', portValue: 8080 } } }] }],
        },
        {
          clusterName: 'inbound_app:192.168.0.7:9090',
          healthChecks: [{ ...defaults, tcpHealthCheck: {} }],
          localityEndpoints: [{ endpoints: [{ address: { socketAddress: { address: '192.168.0.7', portValue: 9090 } } }] }],
        },
        {
          clusterName: 'inbound_app:10.0.0.1:10003',
          healthChecks: [{ ...defaults, tcpHealthCheck: {} }],
          localityEndpoints: [{ endpoints: [{ address: { socketAddress: { address: '10.0.0.1', portValue: 10003 } } }] }],
        },
      ],
    });
  });

  it("is a valid HealthCheckSpecifier on the wire, and leaves Envoy's own check out when its admin API is not on loopback", () => {
    const specifier = healthCheckSpecifier(BACKEND, undefined, SETTINGS);
    expect(specifier.clusterHealthChecks.map((cluster) => cluster.clusterName)).not.toContain(ENVOY_ADMIN_CLUSTER);
    const bytes = encodeMessage('specifier', { '@type': 'type.googleapis.com/envoy.service.health.v3.HealthCheckSpecifier', ...specifier });
    const decoded = decodeMessage('envoy.service.health.v3.HealthCheckSpecifier', bytes) as { interval: { seconds: string }; cluster_health_checks: Array<{ health_checks: Array<Record<string, any>> }> };
    expect(decoded.interval.seconds).toBe('5');
    expect(decoded.cluster_health_checks[0]!.health_checks[0]).toMatchObject({ timeout: { nanos: 500_000_000 }, unhealthy_threshold: { value: 4 }, tcp_health_check: {} });
  });
});

describe('withReportedHealth', () => {
  it('marks an inbound unready when its application fails its check, and ready again when it passes', () => {
    const down = withReportedHealth(BACKEND, reportedHealth(report({ [ENVOY_ADMIN_CLUSTER]: ['HEALTHY'], 'inbound_app:10.0.0.1:8080': ['UNHEALTHY'], 'inbound_app:192.168.0.7:9090': ['HEALTHY'] })));
    expect(down?.networking?.inbound?.map((inbound) => inbound.health)).toEqual([{ ready: false }, { ready: true }, undefined]);
    // The same report again changes nothing (stored, `ready: false` is left out): nothing is written.
    expect(withReportedHealth(down!, reportedHealth(report({ 'inbound_app:10.0.0.1:8080': ['UNHEALTHY'] })))).toBeUndefined();
    const asStored = dataplaneKind.schema.parse(down);
    expect(asStored.networking?.inbound?.[0]?.health).toEqual({});
    expect(withReportedHealth(asStored, reportedHealth(report({ 'inbound_app:10.0.0.1:8080': ['UNHEALTHY'] })))).toBeUndefined();
    // Not checked yet (UNKNOWN, the zero value left off the wire) counts as healthy.
    const up = withReportedHealth(down!, reportedHealth(report({ 'inbound_app:10.0.0.1:8080': [undefined as unknown as string] })));
    expect(up?.networking?.inbound?.map((inbound) => inbound.health)).toEqual([{ ready: true }, { ready: true }, undefined]);
  });

  it('marks every inbound unready while Envoy reports itself not ready (draining)', () => {
    const draining = withReportedHealth(BACKEND, reportedHealth(report({ [ENVOY_ADMIN_CLUSTER]: ['UNHEALTHY'], 'inbound_app:10.0.0.1:8080': ['HEALTHY'] })));
    expect(draining?.networking?.inbound?.map((inbound) => inbound.health)).toEqual([{ ready: false }, { ready: false }, { ready: false }]);
  });
});

/** The transport's side of one stream: what the server wrote and how it ended it. */
class RecordedCall extends EventEmitter implements AdsCall<HealthStreamMessage, HealthCheckSpecifier> {
  readonly authorization: string[] = [];
  readonly peerAddress = '127.0.0.1';
  readonly written: HealthCheckSpecifier[] = [];
  failure: { code: number; details: string } | undefined;

  write(specifier: HealthCheckSpecifier): void {
    this.written.push(specifier);
  }

  fail(code: number, details: string): void {
    this.failure = { code, details };
    this.emit('close');
  }

  end(): void {
    this.emit('close');
  }
}

let store: SqliteResourceStore | undefined;

afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function world(settings: HdsSettings = SETTINGS) {
  store = new SqliteResourceStore({ path: ':memory:' });
  const manager = new ResourceManager({ store, mode: 'standalone' });
  registerCaHooks(manager);
  registerSigningKeyHooks(manager);
  await manager.ensureDefaultMesh();
  const body = { type: 'Dataplane', mesh: 'default', name: 'backend-1', labels: { team: 'payments' }, ...BACKEND };
  await manager.apply(dataplaneKind, { mesh: 'default', name: 'backend-1' }, body);
  const authenticator = new Authenticator({ tokens: new TokenService({ keys: new SigningKeys(store) }), dataplanes: 'none', zoneProxies: 'none', zone: '' });
  const warnings: unknown[] = [];
  const logger = { info: () => {}, warn: (details: object) => warnings.push(details), error: (details: object) => warnings.push(details) };
  const server = new HdsServer({ store, manager, authenticator, settings, defaultAdminPort: 9901, logger });
  const stored = async () => (await store!.get({ type: 'Dataplane', mesh: 'default', name: 'backend-1' }))!;
  return { server, stored, warnings };
}

const node = { id: 'default.backend-1', metadata: { fields: { 'dataplane.admin.port': { stringValue: '9902' }, 'dataplane.admin.address': { stringValue: '127.0.0.1' } } } };

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 200 && !(await check()); tries++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('HdsServer', () => {
  it("sends a proxy its checks and writes what it reports into the dataplane's inbounds, keeping its labels", async () => {
    const { server, stored, warnings } = await world();
    const call = new RecordedCall();
    server.handleStream(call);
    call.emit('data', { health_check_request: { node } });
    await until(() => call.written.length > 0);
    expect(call.written[0]).toEqual(healthCheckSpecifier(BACKEND, { address: '127.0.0.1', portValue: 9902 }, SETTINGS));

    call.emit('data', { endpoint_health_response: report({ [ENVOY_ADMIN_CLUSTER]: ['HEALTHY'], 'inbound_app:10.0.0.1:8080': ['UNHEALTHY'], 'inbound_app:192.168.0.7:9090': ['HEALTHY'], 'inbound_app:10.0.0.1:10003': ['HEALTHY'] }) });
    // Stored, `ready: false` is left out: a health block without it is unready.
    const health = async () => (JSON.parse((await stored()).spec) as DataplaneSpec).networking?.inbound?.map((inbound) => inbound.health && inbound.health.ready === true);
    // The probed inbound starts unready (a dataplane with a probe is created so); the others become ready.
    await until(async () => (await health())?.[1] === true);
    expect(await health()).toEqual([false, true, true]);
    expect((await stored()).labels).toEqual({ team: 'payments' });

    call.emit('data', { endpoint_health_response: report({ 'inbound_app:10.0.0.1:8080': ['HEALTHY'] }) });
    await until(async () => (await health())?.[0] === true);
    expect(await health()).toEqual([true, true, true]);
    expect(warnings).toEqual([]);
    server.shutdown();
    expect(call.failure?.details).toBe('the control plane is shutting down');
  });

  it('refuses streams when health checking is turned off', async () => {
    const { server } = await world({ ...SETTINGS, enabled: false });
    const call = new RecordedCall();
    server.handleStream(call);
    expect(call.failure).toEqual({ code: 12, details: 'health checking by the control plane is turned off (dpServer.hds.enabled)' });
  });
});
