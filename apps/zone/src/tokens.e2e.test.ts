// Tokens and API access against the real binary, with the test client counting as remote
// (`localhostIsAdmin: false`): who may do what, every bad token refused with 401, token claims,
// revocation, and secret data kept out of every other answer and out of the logs.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { generate } from 'selfsigned';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane } from './testing/process.js';

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let cp: Instance;
let adminToken: string;

const request = async (method: string, path: string, options: { token?: string; body?: unknown; raw?: string } = {}) => {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const res = await fetch(`${cp.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, type: res.headers.get('content-type'), text, json };
};

/** The admin token the control plane bootstrapped, read from its database as an operator with file access would. */
async function readAdminToken(workDir: string): Promise<string> {
  const store = new SqliteResourceStore({ path: join(workDir, 'mesh.db') });
  try {
    const secret = await store.get({ type: 'GlobalSecret', mesh: '', name: 'admin-user-token' });
    return Buffer.from((JSON.parse(secret!.spec) as { data: string }).data, 'base64').toString('utf8');
  } finally {
    await store.close();
  }
}

const ACCESS_DENIED = { type: '/std-errors', status: 403, title: 'Access Denied', detail: 'action not allowed' };
const UNAUTHENTICATED = { type: '/std-errors', status: 401, title: 'Invalid authentication data', detail: 'Unauthenticated', details: 'Unauthenticated' };

beforeAll(async () => {
  cp = await startControlPlane({ env: { MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN: 'false' } });
  adminToken = await readAdminToken(cp.workDir);
}, 60_000);
afterAll(async () => {
  await cp?.stop();
});

describe('API access for a remote caller', () => {
  it('knows the caller: anonymous without a token, the admin with the bootstrapped token', async () => {
    expect((await request('GET', '/who-am-i')).json).toEqual({ name: 'mesh-system:anonymous', groups: ['mesh-system:unauthenticated'] });
    // A forwarding header naming the loopback address grants nothing.
    const forged = await fetch(`${cp.url}/global-secrets`, { headers: { 'x-forwarded-for': '127.0.0.1', forwarded: 'for=127.0.0.1' } });
    expect(forged.status).toBe(403);
    expect((await request('GET', '/who-am-i', { token: adminToken })).json).toEqual({ name: 'mesh-system:admin', groups: ['mesh-system:admin', 'mesh-system:authenticated'] });
  });

  it('issues user tokens to admins only, with the claims asked for', async () => {
    const issued = await request('POST', '/tokens/user', { token: adminToken, body: { name: 'john.doe@example.com', groups: ['team-a'], validFor: '24h' } });
    expect(issued).toMatchObject({ status: 200, type: 'text/plain' });
    expect(decodeProtectedHeader(issued.text)).toEqual({ alg: 'RS256', kid: '1', typ: 'JWT' });
    const claims = decodeJwt(issued.text);
    expect(claims).toMatchObject({ Name: 'john.doe@example.com', Groups: ['team-a'] });
    expect(claims.exp! - claims.iat!).toBe(24 * 3600);
    expect(claims.iat! - claims.nbf!).toBe(300);
    expect((await request('GET', '/who-am-i', { token: issued.text })).json).toEqual({ name: 'john.doe@example.com', groups: ['team-a', 'mesh-system:authenticated'] });
    expect((await request('POST', '/tokens/user', { body: { name: 'x', validFor: '1h' } })).json).toMatchObject(ACCESS_DENIED);
  });

  it('refuses restricted endpoints to anonymous and non-admin callers (403) and allows them to admins', async () => {
    const john = (await request('POST', '/tokens/user', { token: adminToken, body: { name: 'john', groups: ['team-a'], validFor: '1h' } })).text;
    await request('PUT', '/meshes/default/dataplanes/web-1', {
      token: adminToken,
      body: { type: 'Dataplane', mesh: 'default', name: 'web-1', networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] } },
    });
    const restricted: Array<[string, string, unknown?]> = [
      ['GET', '/meshes/default/secrets'],
      ['GET', '/global-secrets'],
      ['GET', '/global-secrets/admin-user-token'],
      ['PUT', '/meshes/default/secrets/s-1', { type: 'Secret', mesh: 'default', name: 's-1', data: 'YQ==' }],
      ['POST', '/tokens/dataplane', { mesh: 'default' }],
      ['POST', '/tokens/zone-ingress', { zone: 'east' }],
      ['POST', '/tokens/zone', { zone: 'east', scope: ['ingress'] }],
      ['POST', '/tokens/user', { name: 'x', validFor: '1h' }],
      ['GET', '/meshes/default/dataplanes/web-1/xds'],
    ];
    for (const [method, path, body] of restricted) {
      for (const token of [undefined, john]) {
        const answer = await request(method, path, { ...(token ? { token } : {}), ...(body ? { body } : {}) });
        expect([path, answer.status, answer.json.title]).toEqual([path, 403, 'Access Denied']);
      }
      const allowed = await request(method, path, { token: adminToken, ...(body ? { body } : {}) });
      expect([path, allowed.status < 300]).toEqual([path, true]);
    }
  });

  it('answers 401 to every token that must fail, never 500', async () => {
    const user = (await request('POST', '/tokens/user', { token: adminToken, body: { name: 'short', validFor: '1h' } })).text;
    const [header, payload, signature] = user.split('.');
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const dataplane = (await request('POST', '/tokens/dataplane', { token: adminToken, body: { mesh: 'default' } })).text;
    const bad = [
      'not-a-jwt',
      `${header}.${b64({ ...decodeJwt(user), Groups: ['mesh-system:admin'] })}.${signature}`,
      `${b64({ alg: 'none', kid: '1' })}.${payload}.`,
      `${b64({ alg: 'HS256', kid: '1', typ: 'JWT' })}.${payload}.${signature}`,
      `${b64({ alg: 'RS256', kid: '9', typ: 'JWT' })}.${payload}.${signature}`,
      `${b64({ alg: 'RS256', typ: 'JWT' })}.${payload}.${signature}`,
      dataplane,
    ];
    for (const token of bad) expect(await request('GET', '/meshes', { token })).toMatchObject({ status: 401, json: UNAUTHENTICATED });

    const revoked = (await request('POST', '/tokens/user', { token: adminToken, body: { name: 'revoked', validFor: '1h' } })).text;
    expect((await request('GET', '/meshes', { token: revoked })).status).toBe(200);
    const revocations = { type: 'GlobalSecret', name: 'user-token-revocations', data: Buffer.from(String(decodeJwt(revoked).jti)).toString('base64') };
    expect((await request('PUT', '/global-secrets/user-token-revocations', { token: adminToken, body: revocations })).status).toBe(201);
    expect(await request('GET', '/meshes', { token: revoked })).toMatchObject({ status: 401, json: UNAUTHENTICATED });

    const expiring = (await request('POST', '/tokens/user', { token: adminToken, body: { name: 'brief', validFor: '1s' } })).text;
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect(await request('GET', '/meshes', { token: expiring })).toMatchObject({ status: 401, json: UNAUTHENTICATED });
  });
});

describe('token endpoints', () => {
  it('issue dataplane tokens with the reference claims, by PUT or POST', async () => {
    for (const method of ['PUT', 'POST']) {
      const answer = await request(method, '/tokens/dataplane', { token: adminToken, body: { name: 'web-1', mesh: 'default', tags: { 'mesh.io/service': ['web'] }, validFor: '720h' } });
      expect(answer).toMatchObject({ status: 200, type: 'text/plain' });
      const claims = decodeJwt(answer.text);
      expect(claims).toMatchObject({ Name: 'web-1', Mesh: 'default', Tags: { 'mesh.io/service': ['web'] }, Type: '' });
      expect(claims.exp! - claims.iat!).toBe(720 * 3600);
    }
    const zone = decodeJwt((await request('POST', '/tokens/zone', { token: adminToken, body: { zone: 'east', scope: ['ingress', 'egress'] } })).text);
    expect(zone).toMatchObject({ Zone: 'east', Scope: ['ingress', 'egress'] });
    expect(zone.exp! - zone.iat!).toBe(87_600 * 3600);
  });

  it('answer bad input with 400 and the standard body, and store nothing', async () => {
    const before = (await request('GET', '/global-secrets', { token: adminToken })).json.total;
    const cases: Array<[string, { body?: unknown; raw?: string }, number, Record<string, unknown>]> = [
      ['/tokens/dataplane', { raw: '{"mesh": ' }, 400, { title: 'Bad Request' }],
      ['/tokens/dataplane', { body: [1] }, 400, { title: 'Bad Request' }],
      ['/tokens/dataplane', { body: { mesh: 7 } }, 400, { title: 'Bad Request' }],
      ['/tokens/dataplane', { body: { mesh: 'default', tags: { a: 'b' } } }, 400, { title: 'Bad Request' }],
      ['/tokens/dataplane', { body: {} }, 400, { title: 'Invalid request', invalid_parameters: [{ field: 'mesh', reason: 'cannot be empty' }] }],
      ['/tokens/dataplane', { body: { mesh: 'nowhere' } }, 400, { title: 'Invalid request', invalid_parameters: [{ field: 'mesh', reason: 'mesh of name nowhere is not found' }] }],
      ['/tokens/dataplane', { body: { mesh: 'default', validFor: '0s' } }, 400, { invalid_parameters: [{ field: 'validFor', reason: 'cannot be empty or nil' }] }],
      ['/tokens/dataplane', { body: { mesh: 'default', validFor: '-1h' } }, 400, { invalid_parameters: [{ field: 'validFor', reason: 'must be positive, got -3600s' }] }],
      ['/tokens/dataplane', { body: { mesh: 'default', validFor: '30d' } }, 400, { invalid_parameters: [{ field: 'validFor', reason: 'is invalid: time: unknown unit "d" in duration "30d"' }] }],
      ['/tokens/dataplane', { body: { mesh: 'default', type: 'sidecar' } }, 400, { invalid_parameters: [{ field: 'type', reason: 'sidecar is not a valid proxy type' }] }],
      ['/tokens/zone-ingress', { body: {} }, 400, { invalid_parameters: [{ field: 'zone', reason: 'cannot be empty' }] }],
      ['/tokens/zone', { body: { zone: 'east' } }, 400, { invalid_parameters: [{ field: 'scope', reason: 'cannot be empty' }] }],
      ['/tokens/user', { body: { name: 'x' } }, 400, { invalid_parameters: [{ field: 'validFor', reason: 'cannot be empty' }] }],
      ['/tokens/user', { body: { validFor: '1h', name: '' } }, 400, { invalid_parameters: [{ field: 'name', reason: 'cannot be empty' }] }],
      ['/tokens/user', { raw: 'x'.repeat(9 * 1024 * 1024) }, 413, { title: 'Payload Too Large' }],
    ];
    for (const [path, input, status, body] of cases) {
      const answer = await request('POST', path, { token: adminToken, ...input });
      expect([path, answer.status, answer.json]).toEqual([path, status, expect.objectContaining({ type: '/std-errors', status, ...body })]);
    }
    expect((await request('GET', '/global-secrets', { token: adminToken })).json.total).toBe(before);
  });
});

describe('secret data', () => {
  it('stays out of /config, of the logs and of configuration dumps', async () => {
    const keys = await request('GET', '/global-secrets', { token: adminToken });
    const keyData = (keys.json.items as Array<{ name: string; data: string }>).map((secret) => secret.data);
    const clientKey = Buffer.from('-----BEGIN RSA PRIVATE KEY-----\nTOP-SECRET-CLIENT-KEY\n-----END RSA PRIVATE KEY-----\n').toString('base64');
    await request('PUT', '/meshes/default/external-services/bank', {
      token: adminToken,
      body: {
        type: 'ExternalService',
        mesh: 'default',
        name: 'bank',
        networking: { address: 'bank.example.com:443', tls: { enabled: true, clientCert: { inline: Buffer.from('cert').toString('base64') }, clientKey: { inline: clientKey } } },
        tags: { 'mesh.io/service': 'bank' },
      },
    });
    await request('PUT', '/meshes/default/dataplanes/client', {
      token: adminToken,
      body: { type: 'Dataplane', mesh: 'default', name: 'client', networking: { address: '10.0.0.9', inbound: [{ port: 80, tags: { 'mesh.io/service': 'client' } }], outbound: [{ port: 10001, service: 'bank' }] } },
    });
    const dump = await request('GET', '/meshes/default/dataplanes/client/xds', { token: adminToken });
    expect(dump.status).toBe(200);
    expect(dump.text).toContain('[redacted]');
    const config = await request('GET', '/config');
    for (const secret of [...keyData, clientKey, adminToken]) {
      expect(dump.text).not.toContain(secret);
      expect(config.text).not.toContain(secret);
      expect(cp.output()).not.toContain(secret);
    }
  });
});

describe('client certificates on the HTTPS port', () => {
  const clientCert = () => generate([{ name: 'commonName', value: 'operator' }], { keySize: 2048, algorithm: 'sha256' });

  const whoAmI = (url: string, cert?: { cert: string; private: string }) =>
    new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const req = httpsRequest(`${url}/who-am-i`, { rejectUnauthorized: false, ...(cert ? { cert: cert.cert, key: cert.private } : {}) }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end();
    });

  it('make a caller presenting a certificate of the authorized directory an admin, and refuse others', async () => {
    const [trusted, stranger] = await Promise.all([clientCert(), clientCert()]);
    const dir = mkdtempSync(join(tmpdir(), 'mesh-client-certs-'));
    writeFileSync(join(dir, 'operator.pem'), trusted.cert);
    const secured = await startControlPlane({
      env: { MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN: 'false', MESH_API_SERVER_HTTPS_REQUIRE_CLIENT_CERT: 'true', MESH_API_SERVER_AUTH_CLIENT_CERTS_DIR: dir },
    });
    try {
      expect(await whoAmI(secured.httpsUrl, trusted)).toEqual({ status: 200, body: { name: 'mesh-system:admin', groups: ['mesh-system:admin', 'mesh-system:authenticated'] } });
      await expect(whoAmI(secured.httpsUrl, stranger)).rejects.toThrow();
      await expect(whoAmI(secured.httpsUrl)).rejects.toThrow();
    } finally {
      await secured.stop();
    }
  }, 60_000);
});
