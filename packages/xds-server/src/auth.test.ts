// Proxy authentication: each proxy type takes its own kind of token, and says which one when
// another kind comes (docs/xds.md, Authentication).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataplaneKind } from '@mesh/model';
import { registerCaHooks } from '@mesh/pki';
import { ResourceManager } from '@mesh/resource-manager';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { bootstrapTokens, registerSigningKeyHooks, SigningKeys, TokenService } from '@mesh/tokens';
import { afterEach, describe, expect, it } from 'vitest';
import { Authenticator } from './auth.js';

const HOUR = 3600;
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'xds-auth-'));
  const store = new SqliteResourceStore({ path: join(dir, 'store.db') });
  cleanups.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const manager = new ResourceManager({ store, mode: 'standalone' });
  registerCaHooks(manager);
  registerSigningKeyHooks(manager);
  await manager.ensureDefaultMesh();
  const keys = new SigningKeys(store);
  const tokens = new TokenService({ keys });
  await bootstrapTokens({ manager, keys, tokens, mode: 'standalone', bootstrapAdminToken: false });
  const authenticator = new Authenticator({ tokens, dataplanes: 'dpToken', zoneProxies: 'zoneToken', zone: '' });
  return { tokens, authenticator };
}

const WEB = { mesh: 'default', name: 'web-1', spec: dataplaneKind.schema.parse({ networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }] } }) };

// Each test generates RSA keys: seconds on a busy machine.
describe('Authenticator', { timeout: 60_000 }, () => {
  it('takes a dataplane token of type dataplane or without a type for a dataplane proxy, and refuses one of a zone proxy type', async () => {
    const { tokens, authenticator } = await setup();
    const dataplaneToken = (type: string) => tokens.issueDataplaneToken({ name: 'web-1', mesh: 'default', tags: {}, type }, HOUR);
    await expect(authenticator.authenticateDataplane(await dataplaneToken(''), WEB)).resolves.toBeUndefined();
    await expect(authenticator.authenticateDataplane(await dataplaneToken('dataplane'), WEB)).resolves.toBeUndefined();
    for (const type of ['ingress', 'egress']) {
      await expect(authenticator.authenticateDataplane(await dataplaneToken(type), WEB)).rejects.toThrow(
        `authentication failed: a dataplane token of type "${type}" cannot authenticate a dataplane proxy; it takes a dataplane token of type "dataplane" or without a type`,
      );
    }
  });

  it('refuses a zone or zone-ingress token for a dataplane proxy, naming the token it takes', async () => {
    const { tokens, authenticator } = await setup();
    await expect(authenticator.authenticateDataplane(await tokens.issueZoneToken({ zone: '', scope: ['ingress', 'egress'] }, HOUR), WEB)).rejects.toThrow(
      'authentication failed: a zone token cannot authenticate a dataplane proxy; it takes a dataplane token',
    );
    await expect(authenticator.authenticateDataplane(await tokens.issueZoneIngressToken('', HOUR), WEB)).rejects.toThrow(
      'authentication failed: a zone-ingress token cannot authenticate a dataplane proxy; it takes a dataplane token',
    );
  });

  it('refuses a dataplane token, of any type, for a zone ingress or egress, naming the token it takes', async () => {
    const { tokens, authenticator } = await setup();
    for (const type of ['', 'dataplane', 'ingress', 'egress']) {
      const token = await tokens.issueDataplaneToken({ name: '', mesh: 'default', tags: {}, type }, HOUR);
      await expect(authenticator.authenticateZoneProxy(token, 'ingress')).rejects.toThrow(
        'authentication failed: a dataplane token cannot authenticate a zone ingress; it takes a zone token whose scope holds ingress (or a zone-ingress token)',
      );
      await expect(authenticator.authenticateZoneProxy(token, 'egress')).rejects.toThrow(
        'authentication failed: a dataplane token cannot authenticate a zone egress; it takes a zone token whose scope holds egress',
      );
    }
    await expect(authenticator.authenticateZoneProxy(await tokens.issueZoneIngressToken('', HOUR), 'egress')).rejects.toThrow(
      'authentication failed: a zone-ingress token cannot authenticate a zone egress; it takes a zone token whose scope holds egress',
    );
  });

  it('keeps taking the tokens of zone proxies, and the reason a token of the right kind failed', async () => {
    const { tokens, authenticator } = await setup();
    await expect(authenticator.authenticateZoneProxy(await tokens.issueZoneToken({ zone: '', scope: ['ingress'] }, HOUR), 'ingress')).resolves.toBeUndefined();
    await expect(authenticator.authenticateZoneProxy(await tokens.issueZoneIngressToken('', HOUR), 'ingress')).resolves.toBeUndefined();
    await expect(authenticator.authenticateZoneProxy(await tokens.issueZoneToken({ zone: '', scope: ['egress'] }, HOUR), 'egress')).resolves.toBeUndefined();
    await expect(authenticator.authenticateZoneProxy(await tokens.issueZoneToken({ zone: '', scope: ['egress'] }, HOUR), 'ingress')).rejects.toThrow(
      "authentication failed: token cannot be used to authenticate zone entity (ingress is out of token's scope: [egress])",
    );
    await expect(authenticator.authenticateDataplane('not-a-jwt', WEB)).rejects.toThrow('authentication failed: could not parse the token');
  });
});
