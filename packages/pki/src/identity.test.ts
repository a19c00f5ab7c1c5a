import { X509Certificate } from 'node:crypto';
import { getKind } from '@mesh/model';
import { ResourceManager } from '@mesh/resource-manager';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { describe, expect, it } from 'vitest';
import { registerCaHooks } from './hooks.js';
import { issueMeshIdentity, loadMeshCa } from './identity.js';

async function meshWithBuiltinCa(dpCert?: object) {
  const store = new SqliteResourceStore({ path: ':memory:' });
  const manager = new ResourceManager({ store, mode: 'standalone' });
  registerCaHooks(manager);
  const mtls = { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin', ...(dpCert ? { dpCert } : {}) }] };
  await manager.apply(getKind('Mesh'), { mesh: '', name: 'demo' }, { type: 'Mesh', name: 'demo', mtls });
  return { store, mtls };
}

describe('mesh identities', () => {
  it('issues a proxy certificate the mesh CA verifies, naming its services and tags as URIs', async () => {
    const { store, mtls } = await meshWithBuiltinCa();
    const ca = await loadMeshCa(store, 'demo', mtls);
    expect(ca).toMatchObject({ backend: 'ca-1', type: 'builtin', certificateValidityMs: 24 * 3600 * 1000 });
    const now = new Date('2030-01-02T03:04:05.000Z');
    const issued = await issueMeshIdentity(ca!, { mesh: 'demo', services: ['web'], tags: { 'mesh.io/service': ['web'], version: ['v1', 'v2'] } }, now);
    const certificate = new X509Certificate(issued.certificatePem);
    const caCertificate = new X509Certificate(issued.caPem);
    expect(certificate.verify(caCertificate.publicKey)).toBe(true);
    expect(certificate.subjectAltName).toBe('URI:spiffe://demo/web, URI:mesh://mesh.io/service/web, URI:mesh://version/v1, URI:mesh://version/v2');
    expect(certificate.ca).toBe(false);
    expect(new Date(certificate.validTo).toISOString()).toBe('2030-01-03T03:04:05.000Z');
    expect(issued.notAfter.toISOString()).toBe('2030-01-03T03:04:05.000Z');
    expect(certificate.checkPrivateKey((await import('node:crypto')).createPrivateKey(issued.privateKeyPem))).toBe(true);
    await store.close();
  });

  it('reads the validity of proxy certificates from the backend, and nothing when mTLS is off', async () => {
    const { store, mtls } = await meshWithBuiltinCa({ rotation: { expiration: '2h' } });
    expect((await loadMeshCa(store, 'demo', mtls))?.certificateValidityMs).toBe(2 * 3600 * 1000);
    expect(await loadMeshCa(store, 'demo', { backends: mtls.backends })).toBeUndefined();
    await store.close();
  });
});
