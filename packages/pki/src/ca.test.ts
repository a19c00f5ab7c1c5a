// The CA rules of meshes the write path runs once this package registers them: mTLS backends
// checked, builtin CAs generated, CA swaps refused, secrets a backend reads kept.
import { getKind } from '@mesh/model';
import { ResourceManager } from '@mesh/resource-manager';
import type { StoredResource } from '@mesh/store';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { generate } from 'selfsigned';
import { describe, expect, it } from 'vitest';
import { registerCaHooks } from './hooks.js';

const kind = getKind;

function setup({ caHooks = true } = {}) {
  const store = new SqliteResourceStore({ path: ':memory:' });
  const manager = new ResourceManager({ store, mode: 'standalone' });
  if (caHooks) registerCaHooks(manager);
  return { store, manager };
}

/** Writes through the one write path, as the API would with this body. */
const put = (manager: ResourceManager, type: string, mesh: string, name: string, spec: Record<string, unknown>) =>
  manager.apply(kind(type), { mesh, name }, { type, ...(kind(type).scope === 'mesh' ? { mesh } : {}), name, ...spec });
const update = (manager: ResourceManager, type: string, current: StoredResource, spec: Record<string, unknown>) => put(manager, type, current.mesh, current.name, spec);
const remove = (manager: ResourceManager, type: string, current: StoredResource) => manager.remove(kind(type), current);

async function caPair() {
  const ca = await generate([{ name: 'commonName', value: 'test CA' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true },
    ],
  });
  return { cert: Buffer.from(ca.cert).toString('base64'), key: Buffer.from(ca.private).toString('base64') };
}

describe('CA rules of meshes', () => {
  it('generates a builtin CA as two secrets of the mesh', async () => {
    const { store, manager } = setup();
    await put(manager, 'Mesh', '', 'secure', { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } });
    const cert = await store.get({ type: 'Secret', mesh: 'secure', name: 'secure.ca-builtin-cert-ca-1' });
    const key = await store.get({ type: 'Secret', mesh: 'secure', name: 'secure.ca-builtin-key-ca-1' });
    expect(Buffer.from(JSON.parse(cert!.spec).data, 'base64').toString()).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(Buffer.from(JSON.parse(key!.spec).data, 'base64').toString()).toMatch(/PRIVATE KEY-----/);
  });

  it('refuses an mTLS backend type without a CA plugin', async () => {
    const { manager } = setup();
    await expect(put(manager, 'Mesh', '', 'm', { mtls: { backends: [{ name: 'x', type: 'vault' }] } })).rejects.toMatchObject({
      code: 'invalid',
      violations: [{ field: 'mtls.backends[0].type', message: 'could not find installed plugin for this type' }],
    });
  });

  it('checks a provided CA: secrets must exist in the mesh, and form a CA key pair', async () => {
    const { store, manager } = setup();
    await put(manager, 'Mesh', '', 'm', {});
    const provided = { mtls: { enabledBackend: 'ca', backends: [{ name: 'ca', type: 'provided', conf: { cert: { secret: 'c' }, key: { secret: 'k' } } }] } };
    const current = async () => (await store.get({ type: 'Mesh', mesh: '', name: 'm' }))!;
    await expect(update(manager, 'Mesh', await current(), provided)).rejects.toMatchObject({
      violations: [
        { field: 'mtls.backends[0].conf.cert', message: 'could not load data: Resource not found: type="Secret" name="k" mesh="m"' },
        { field: 'mtls.backends[0].conf.key', message: 'could not load data: Resource not found: type="Secret" name="k" mesh="m"' },
      ],
    });

    const pair = await caPair();
    const other = await caPair();
    await put(manager, 'Secret', 'm', 'c', { data: pair.cert });
    await put(manager, 'Secret', 'm', 'k', { data: other.key });
    await expect(update(manager, 'Mesh', await current(), provided)).rejects.toMatchObject({
      violations: [{ field: 'mtls.backends[0].conf.cert', message: expect.stringMatching(/^not a valid TLS key pair: /) }],
    });

    await update(manager, 'Secret', (await store.get({ type: 'Secret', mesh: 'm', name: 'k' }))!, { data: pair.key });
    await update(manager, 'Mesh', await current(), provided);
    expect(JSON.parse((await current()).spec).mtls.enabledBackend).toBe('ca');

    await expect(remove(manager, 'Secret', (await store.get({ type: 'Secret', mesh: 'm', name: 'c' }))!)).rejects.toMatchObject({
      violations: [
        {
          field: 'name',
          message:
            'The secret "c" that you are trying to remove is currently in use in Mesh "m" in mTLS backend "ca". Please remove the reference from the "ca" backend before removing the secret.',
        },
      ],
    });
  });

  it('refuses to swap the CA of a mesh whose mTLS stays on', async () => {
    const { store, manager } = setup();
    await put(manager, 'Mesh', '', 'm', { mtls: { enabledBackend: 'a', backends: [{ name: 'a', type: 'builtin' }] } });
    const current = (await store.get({ type: 'Mesh', mesh: '', name: 'm' }))!;
    await expect(update(manager, 'Mesh', current, { mtls: { backends: [{ name: 'b', type: 'builtin' }], enabledBackend: 'b' } })).rejects.toMatchObject({
      violations: [{ field: 'mtls.enabledBackend', message: 'Changing CA when mTLS is enabled is forbidden. Disable mTLS first and then change the CA' }],
    });
  });

  it('are not run by a manager they were not registered with', async () => {
    const { store, manager } = setup({ caHooks: false });
    await put(manager, 'Mesh', '', 'm', { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } });
    expect(await store.count('Secret', 'm')).toBe(0);
    const current = (await store.get({ type: 'Mesh', mesh: '', name: 'm' }))!;
    await update(manager, 'Mesh', current, { mtls: { enabledBackend: 'ca-2', backends: [{ name: 'ca-2', type: 'builtin' }] } });
    expect(JSON.parse((await store.get({ type: 'Mesh', mesh: '', name: 'm' }))!.spec).mtls.enabledBackend).toBe('ca-2');
  });

  it('are run once registered: a CA plugin is required and a builtin CA generated', async () => {
    const { store, manager } = setup();
    await expect(put(manager, 'Mesh', '', 'm', { mtls: { backends: [{ name: 'v', type: 'vault' }] } })).rejects.toMatchObject({ code: 'invalid' });
    await put(manager, 'Mesh', '', 'm', { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } });
    expect((await store.list({ type: 'Secret', mesh: 'm', offset: 0, size: 0 })).items.map((s) => s.name)).toEqual(['m.ca-builtin-cert-ca-1', 'm.ca-builtin-key-ca-1']);
  });
});
