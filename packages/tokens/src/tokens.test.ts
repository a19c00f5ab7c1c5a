import { createHmac, createPublicKey } from 'node:crypto';
import { getKind } from '@mesh/model';
import { generateSigningKeyData, registerCaHooks } from '@mesh/pki';
import { ResourceManager } from '@mesh/resource-manager';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { bootstrapTokens, ADMIN_TOKEN_SECRET } from './bootstrap.js';
import { keyPlace, registerSigningKeyHooks, SigningKeys } from './signing-keys.js';
import { SigningKeyNotFound, tokenKindOf, TokenService } from './tokens.js';

const HOUR = 3600;

async function setup(mode: 'standalone' | 'zone' = 'standalone') {
  let now = new Date('2026-01-01T00:00:00.000Z');
  const store = new SqliteResourceStore({ path: ':memory:' });
  const manager = new ResourceManager({ store, mode, ...(mode === 'zone' ? { zoneName: 'east' } : {}) });
  registerCaHooks(manager);
  registerSigningKeyHooks(manager);
  if (mode !== 'zone') await manager.ensureDefaultMesh();
  const keys = new SigningKeys(store);
  const tokens = new TokenService({ keys, now: () => now });
  await bootstrapTokens({ manager, keys, tokens, mode, bootstrapAdminToken: true });
  return { store, manager, keys, tokens, at: (iso: string) => (now = new Date(iso)) };
}

const b64url = (value: object | string) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('TokenService', () => {
  it('issues RS256 tokens with the key serial as kid and the reference claims', async () => {
    const { tokens } = await setup();
    const token = await tokens.issueDataplaneToken({ name: 'web-1', mesh: 'default', tags: { 'mesh.io/service': ['web'] }, type: '' }, 24 * HOUR);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', kid: '1', typ: 'JWT' });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ Name: 'web-1', Mesh: 'default', Tags: { 'mesh.io/service': ['web'] }, Type: '' });
    const iat = Date.parse('2026-01-01T00:00:00.000Z') / 1000;
    expect([claims.iat, claims.nbf, claims.exp]).toEqual([iat, iat - 300, iat + 24 * HOUR]);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(await tokens.verifyDataplaneToken(token, { mesh: 'default', name: 'web-1', tags: { 'mesh.io/service': ['web'] } })).toMatchObject({ ok: true });
  });

  it('checks a dataplane token against the proxy: name, mesh and tags', async () => {
    const { tokens } = await setup();
    const token = await tokens.issueDataplaneToken({ name: 'web-1', mesh: 'default', tags: { 'mesh.io/service': ['web'] }, type: '' }, HOUR);
    const check = (proxy: { mesh: string; name: string; tags: Record<string, string[]> }) => tokens.verifyDataplaneToken(token, proxy);
    expect(await check({ mesh: 'default', name: 'web-2', tags: { 'mesh.io/service': ['web'] } })).toEqual({ ok: false, reason: 'proxy name from requestor: web-2 is different than in token: web-1' });
    expect(await check({ mesh: 'default', name: 'web-1', tags: {} })).toEqual({ ok: false, reason: 'dataplane has no tag "mesh.io/service" required by the token' });
    expect(await check({ mesh: 'default', name: 'web-1', tags: { 'mesh.io/service': ['web', 'api'] } })).toMatchObject({
      ok: false,
      reason: 'dataplane contains tag "mesh.io/service" with value "api" which is not allowed with this token. Allowed values in token are [web]',
    });
  });

  it('takes a dataplane token for a dataplane proxy only when its type is a dataplane’s', async () => {
    const { tokens } = await setup();
    const web = { mesh: 'default', name: 'web-1', tags: { 'mesh.io/service': ['web'] } };
    const ofType = (type: string) => tokens.issueDataplaneToken({ name: 'web-1', mesh: 'default', tags: {}, type }, HOUR);
    expect(await tokens.verifyDataplaneToken(await ofType(''), web)).toMatchObject({ ok: true, claims: { type: '' } });
    expect(await tokens.verifyDataplaneToken(await ofType('dataplane'), web)).toMatchObject({ ok: true, claims: { type: 'dataplane' } });
    for (const type of ['ingress', 'egress']) {
      expect(await tokens.verifyDataplaneToken(await ofType(type), web)).toEqual({
        ok: false,
        reason: `a dataplane token of type "${type}" cannot authenticate a dataplane proxy; it takes a dataplane token of type "dataplane" or without a type`,
      });
    }
  }, 60_000);

  it('tells the kind of a token by its claims', async () => {
    const { tokens } = await setup();
    expect(tokenKindOf(await tokens.issueDataplaneToken({ name: '', mesh: 'default', tags: {}, type: 'ingress' }, HOUR))).toBe('dataplane');
    expect(tokenKindOf(await tokens.issueZoneIngressToken('east', HOUR))).toBe('zoneIngress');
    expect(tokenKindOf(await tokens.issueZoneToken({ zone: '', scope: ['egress'] }, HOUR))).toBe('zone');
    expect(tokenKindOf(await tokens.issueUserToken({ name: 'john', groups: [] }, HOUR))).toBe('user');
    expect(tokenKindOf('not-a-jwt')).toBeUndefined();
    expect(tokenKindOf(`${b64url({ alg: 'RS256' })}.${b64url({ sub: 'x' })}.c2ln`)).toBeUndefined();
  }, 60_000);

  it('refuses tokens that must fail, each with its reason', async () => {
    const { tokens, keys, manager, at } = await setup();
    const user = await tokens.issueUserToken({ name: 'john', groups: ['team-a'] }, HOUR);
    expect(await tokens.verifyUserToken(user)).toEqual({ ok: true, claims: { name: 'john', groups: ['team-a'] } });

    at('2026-01-01T02:00:00.000Z');
    expect(await tokens.verifyUserToken(user)).toEqual({ ok: false, reason: 'token is expired' });
    at('2025-12-31T23:00:00.000Z');
    expect(await tokens.verifyUserToken(user)).toMatchObject({ ok: false });
    at('2026-01-01T00:00:00.000Z');

    const [header, payload, signature] = user.split('.');
    const claims: Record<string, unknown> = decodeJwt(user);
    const tampered = `${header}.${b64url({ ...claims, Groups: ['mesh-system:admin'] })}.${signature}`;
    expect(await tokens.verifyUserToken(tampered)).toEqual({ ok: false, reason: 'token signature is invalid' });
    expect(await tokens.verifyUserToken(`${b64url({ alg: 'none', kid: '1' })}.${payload}.`)).toMatchObject({ ok: false, reason: expect.stringContaining('unsupported token alg none') });

    const publicPem = createPublicKey((await keys.current(keyPlace('user')))!.privateKey).export({ type: 'spki', format: 'pem' });
    const hsHeader = b64url({ alg: 'HS256', kid: '1', typ: 'JWT' });
    const hs = `${hsHeader}.${payload}.${createHmac('sha256', publicPem).update(`${hsHeader}.${payload}`).digest('base64url')}`;
    expect(await tokens.verifyUserToken(hs)).toMatchObject({ ok: false, reason: expect.stringContaining('unsupported token alg HS256') });

    const unknownKid = `${b64url({ alg: 'RS256', kid: '7', typ: 'JWT' })}.${payload}.${signature}`;
    expect(await tokens.verifyUserToken(unknownKid)).toEqual({
      ok: false,
      reason: 'there is no signing key with KID 7. GlobalSecret of name "user-token-signing-key-7" is not found. If signing key was rotated, regenerate the token',
    });
    const noKid = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${payload}.${signature}`;
    expect(await tokens.verifyUserToken(noKid)).toEqual({ ok: false, reason: 'JWT token must have kid header' });

    // A dataplane token is signed by another key: it is no user token.
    const dataplane = await tokens.issueDataplaneToken({ name: 'web-1', mesh: 'default', tags: {}, type: '' }, HOUR);
    expect(await tokens.verifyUserToken(dataplane)).toEqual({ ok: false, reason: 'token signature is invalid' });

    await manager.apply(getKind('GlobalSecret'), { mesh: '', name: 'user-token-revocations' }, {
      type: 'GlobalSecret',
      name: 'user-token-revocations',
      data: Buffer.from(`other,${String(decodeJwt(user).jti)}\n`).toString('base64'),
    });
    expect(await tokens.verifyUserToken(user)).toEqual({ ok: false, reason: 'token is revoked' });
  });

  it('rotates: new tokens are signed with the highest serial; old ones verify until their key goes', async () => {
    const { tokens, manager } = await setup();
    const before = await tokens.issueUserToken({ name: 'a', groups: [] }, HOUR);
    await manager.apply(getKind('GlobalSecret'), { mesh: '', name: 'user-token-signing-key-2' }, { type: 'GlobalSecret', name: 'user-token-signing-key-2', data: await generateSigningKeyData() });
    const after = await tokens.issueUserToken({ name: 'b', groups: [] }, HOUR);
    expect([decodeProtectedHeader(before).kid, decodeProtectedHeader(after).kid]).toEqual(['1', '2']);
    expect((await tokens.verifyUserToken(before)).ok).toBe(true);
    await manager.remove(getKind('GlobalSecret'), { mesh: '', name: 'user-token-signing-key-1' });
    expect(await tokens.verifyUserToken(before)).toMatchObject({ ok: false, reason: expect.stringContaining('KID 1') });
    expect((await tokens.verifyUserToken(after)).ok).toBe(true);
    // A token verified before is checked again once its key is replaced under the same name.
    await manager.apply(getKind('GlobalSecret'), { mesh: '', name: 'user-token-signing-key-2' }, { type: 'GlobalSecret', name: 'user-token-signing-key-2', data: await generateSigningKeyData() });
    expect(await tokens.verifyUserToken(after)).toEqual({ ok: false, reason: 'token signature is invalid' });
  });

  it('bootstraps keys and the admin token; a zone issues no zone tokens', async () => {
    const { store, tokens } = await setup();
    const names = (await store.list({ type: 'GlobalSecret', offset: 0, size: 0 })).items.map((s) => s.name);
    expect(names).toEqual([ADMIN_TOKEN_SECRET, 'user-token-signing-key-1', 'zone-ingress-token-signing-key-1', 'zone-token-signing-key-1']);
    const admin = Buffer.from(JSON.parse((await store.get({ type: 'GlobalSecret', mesh: '', name: ADMIN_TOKEN_SECRET }))!.spec).data, 'base64').toString();
    expect(await tokens.verifyUserToken(admin)).toEqual({ ok: true, claims: { name: 'mesh-system:admin', groups: ['mesh-system:admin'] } });

    const zone = await setup('zone');
    expect((await zone.store.list({ type: 'GlobalSecret', offset: 0, size: 0 })).items.map((s) => s.name)).toEqual([ADMIN_TOKEN_SECRET, 'user-token-signing-key-1']);
    await expect(zone.tokens.issueZoneToken({ zone: 'east', scope: ['ingress'] }, HOUR)).rejects.toBeInstanceOf(SigningKeyNotFound);
  });

  it('checks zone tokens for scope and zone', async () => {
    const { tokens } = await setup();
    const token = await tokens.issueZoneToken({ zone: 'east', scope: ['ingress'] }, HOUR);
    expect(await tokens.verifyZoneToken(token, 'east', 'ingress')).toMatchObject({ ok: true, claims: { zone: 'east', scope: ['ingress'] } });
    expect(await tokens.verifyZoneToken(token, 'east', 'egress')).toEqual({ ok: false, reason: "token cannot be used to authenticate zone entity (egress is out of token's scope: [ingress])" });
    expect(await tokens.verifyZoneToken(token, 'west', 'ingress')).toEqual({ ok: false, reason: 'zone from requestor: west is different than in token: east' });
    const ingress = await tokens.issueZoneIngressToken('east', HOUR);
    expect(await tokens.verifyZoneIngressToken(ingress, 'east')).toEqual({ ok: true, claims: { zone: 'east' } });
  });
});
