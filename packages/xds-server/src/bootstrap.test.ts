// The bootstrap's health discovery (docs/xds.md, Health from the control plane): a dataplane's
// Envoy reports to the control plane over the ADS connection unless `dpServer.hds.enabled` is off.
import { registerCaHooks } from '@mesh/pki';
import { ResourceManager } from '@mesh/resource-manager';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { registerSigningKeyHooks, SigningKeys, TokenService } from '@mesh/tokens';
import { afterEach, describe, expect, it } from 'vitest';
import { Authenticator } from './auth.js';
import { BootstrapGenerator } from './bootstrap.js';

let store: SqliteResourceStore | undefined;

afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function bootstrapOf(healthChecks: boolean, proxyType: 'dataplane' | 'egress'): Promise<Record<string, any>> {
  store = new SqliteResourceStore({ path: ':memory:' });
  const manager = new ResourceManager({ store, mode: 'standalone' });
  registerCaHooks(manager);
  registerSigningKeyHooks(manager);
  await manager.ensureDefaultMesh();
  const authenticator = new Authenticator({ tokens: new TokenService({ keys: new SigningKeys(store) }), dataplanes: 'none', zoneProxies: 'none', zone: '' });
  const settings = { adminAddress: '127.0.0.1', adminPort: 9901, adminAccessLogPath: '', xdsHost: '127.0.0.1', xdsPort: 5678, xdsConnectTimeout: '1s' };
  const generator = new BootstrapGenerator({ store, authenticator, settings, port: 5678, certificatePem: undefined, healthChecks });
  const resource =
    proxyType === 'dataplane'
      ? { type: 'Dataplane', mesh: 'default', name: 'backend-1', networking: { address: '127.0.0.1', inbound: [{ port: 10001, servicePort: 8080, tags: { 'mesh.io/service': 'backend' } }] } }
      : { type: 'ZoneEgress', name: 'egress-1', networking: { address: '127.0.0.1', port: 10002 } };
  const answer = await generator.generate({ proxyType, dataplaneResource: JSON.stringify(resource), dataplaneToken: 'token-text' }, '127.0.0.1');
  return JSON.parse(Buffer.from(String(answer.bootstrap), 'base64').toString('utf8')) as Record<string, any>;
}

describe('health discovery in the bootstrap', () => {
  it("has a dataplane's Envoy open the health discovery stream on the ADS cluster, with its token", async () => {
    const bootstrap = await bootstrapOf(true, 'dataplane');
    expect(bootstrap.hdsConfig).toEqual({
      apiType: 'GRPC',
      transportApiVersion: 'V3',
      setNodeOnFirstMessageOnly: true,
      grpcServices: [{ envoyGrpc: { clusterName: 'ads_cluster' }, initialMetadata: [{ key: 'authorization', value: 'token-text' }] }],
    });
  });

  it('leaves it out when dpServer.hds.enabled is off, and for zone proxies, which have no inbounds to check', async () => {
    expect((await bootstrapOf(false, 'dataplane')).hdsConfig).toBeUndefined();
    expect((await bootstrapOf(true, 'egress')).hdsConfig).toBeUndefined();
  });
});
