import { getKind } from '@mesh/model';
import type { StoredResource } from '@mesh/store';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { generate } from 'selfsigned';
import { describe, expect, it } from 'vitest';
import { ResourceManager } from './manager.js';

const kind = getKind;
const ALL = [{ match: { 'mesh.io/service': '*' } }];

async function setup(mode: 'standalone' | 'global' | 'zone' = 'standalone', zoneName?: string) {
  const store = new SqliteResourceStore({ path: ':memory:' });
  const manager = new ResourceManager({ store, mode, ...(zoneName ? { zoneName } : {}) });
  return { store, manager };
}

/** Writes through the one write path, as the API would with this body. */
const put = (manager: ResourceManager, type: string, mesh: string, name: string, spec: Record<string, unknown>) =>
  manager.apply(kind(type), { mesh, name }, { type, ...(kind(type).scope === 'mesh' ? { mesh } : {}), name, ...spec });
const update = (manager: ResourceManager, type: string, current: StoredResource, spec: Record<string, unknown>) => put(manager, type, current.mesh, current.name, spec);
const remove = (manager: ResourceManager, type: string, current: StoredResource) => manager.remove(kind(type), current);

const names = async (store: SqliteResourceStore, type: string, mesh: string) =>
  (await store.list({ type, mesh, offset: 0, size: 0 })).items.map((r) => r.name);

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

describe('ResourceManager', () => {
  it('creates a mesh with the default policies and the token signing key', async () => {
    const { store, manager } = await setup();
    await put(manager, 'Mesh', '', 'm1', {});
    expect(await names(store, 'TrafficPermission', 'm1')).toEqual(['allow-all-m1']);
    expect(await names(store, 'TrafficRoute', 'm1')).toEqual(['route-all-m1']);
    expect(await names(store, 'Timeout', 'm1')).toEqual(['timeout-all-m1']);
    expect(await names(store, 'CircuitBreaker', 'm1')).toEqual(['circuit-breaker-all-m1']);
    expect(await names(store, 'Retry', 'm1')).toEqual(['retry-all-m1']);
    expect(await names(store, 'Secret', 'm1')).toEqual(['dataplane-token-signing-key-m1-1']);
    const route = await store.get({ type: 'TrafficRoute', mesh: 'm1', name: 'route-all-m1' });
    expect(JSON.parse(route!.spec)).toEqual({
      sources: ALL,
      destinations: ALL,
      conf: { destination: { 'mesh.io/service': '*' }, loadBalancer: { roundRobin: {} } },
    });
  });

  it('writes a mesh and everything it owns in one store write, so a crash never leaves a mesh without its defaults', async () => {
    const { store, manager } = await setup();
    const writes: Array<{ method: string; owned: string[] }> = [];
    for (const method of ['create', 'update', 'createMissing', 'writeBatch', 'delete', 'deleteMesh'] as const) {
      const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
      (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        const owned = method === 'create' || method === 'update' ? ((args[1] as Array<{ name: string }> | undefined) ?? []) : [];
        writes.push({ method, owned: owned.map((r) => r.name).sort() });
        return original(...args);
      };
    }
    await put(manager, 'Mesh', '', 'm1', {});
    expect(writes).toEqual([
      { method: 'create', owned: ['allow-all-m1', 'circuit-breaker-all-m1', 'dataplane-token-signing-key-m1-1', 'retry-all-m1', 'route-all-m1', 'timeout-all-m1'] },
    ]);
    writes.length = 0;
    await update(manager, 'Mesh', (await store.get({ type: 'Mesh', mesh: '', name: 'm1' }))!, { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } });
    expect(writes).toEqual([{ method: 'update', owned: ['m1.ca-builtin-cert-ca-1', 'm1.ca-builtin-key-ca-1'] }]);
  });

  it('skips the initial policies a mesh names, or all of them with *', async () => {
    const { store, manager } = await setup();
    await put(manager, 'Mesh', '', 'some', { skipCreatingInitialPolicies: ['TrafficRoute', 'Retry'] });
    await put(manager, 'Mesh', '', 'none', { skipCreatingInitialPolicies: ['*'] });
    expect(await names(store, 'TrafficRoute', 'some')).toEqual([]);
    expect(await names(store, 'Retry', 'some')).toEqual([]);
    expect(await names(store, 'Timeout', 'some')).toEqual(['timeout-all-some']);
    expect(await store.count('TrafficPermission', 'none')).toBe(0);
  });

  it('generates a builtin CA as two secrets of the mesh', async () => {
    const { store, manager } = await setup();
    await put(manager, 'Mesh', '', 'secure', { mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } });
    const cert = await store.get({ type: 'Secret', mesh: 'secure', name: 'secure.ca-builtin-cert-ca-1' });
    const key = await store.get({ type: 'Secret', mesh: 'secure', name: 'secure.ca-builtin-key-ca-1' });
    expect(Buffer.from(JSON.parse(cert!.spec).data, 'base64').toString()).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(Buffer.from(JSON.parse(key!.spec).data, 'base64').toString()).toMatch(/PRIVATE KEY-----/);
  });

  it('refuses an mTLS backend type without a CA plugin', async () => {
    const { manager } = await setup();
    await expect(put(manager, 'Mesh', '', 'm', { mtls: { backends: [{ name: 'x', type: 'vault' }] } })).rejects.toMatchObject({
      code: 'invalid',
      violations: [{ field: 'mtls.backends[0].type', message: 'could not find installed plugin for this type' }],
    });
  });

  it('checks a provided CA: secrets must exist in the mesh, and form a CA key pair', async () => {
    const { store, manager } = await setup();
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
    const { store, manager } = await setup();
    await put(manager, 'Mesh', '', 'm', { mtls: { enabledBackend: 'a', backends: [{ name: 'a', type: 'builtin' }] } });
    const current = (await store.get({ type: 'Mesh', mesh: '', name: 'm' }))!;
    await expect(update(manager, 'Mesh', current, { mtls: { backends: [{ name: 'b', type: 'builtin' }], enabledBackend: 'b' } })).rejects.toMatchObject({
      violations: [{ field: 'mtls.enabledBackend', message: 'Changing CA when mTLS is enabled is forbidden. Disable mTLS first and then change the CA' }],
    });
  });

  it('refuses a resource in a mesh that does not exist, for every mesh-scoped kind', async () => {
    const { manager } = await setup();
    const valid: Record<string, Record<string, unknown>> = {
      TrafficRoute: { sources: ALL, destinations: ALL, conf: { destination: { 'mesh.io/service': '*' } } },
      Secret: { data: 'YQ==' },
      ExternalService: { networking: { address: 'a.b:80' }, tags: { 'mesh.io/service': 'es' } },
      RateLimit: { sources: ALL, destinations: ALL, conf: { http: { requests: 10, interval: '1s' } } },
      Dataplane: { networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] } },
    };
    for (const [name, spec] of Object.entries(valid)) {
      await expect(put(manager, name, 'ghost', 'x', spec)).rejects.toMatchObject({
        code: 'mesh_not_found',
        message: 'Mesh is not found',
        violations: [{ field: 'mesh', message: 'mesh of name ghost is not found' }],
      });
    }
  });

  it('deletes a mesh with everything it owns, but not while dataplanes are in it', async () => {
    const { store, manager } = await setup();
    await put(manager, 'Mesh', '', 'm', {});
    await put(manager, 'ExternalService', 'm', 'es', { networking: { address: 'a.b:80' }, tags: { 'mesh.io/service': 'es' } });
    await put(manager, 'Secret', 'm', 's', { data: 'YQ==' });
    await put(manager, 'Dataplane', 'm', 'dp', { networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] } });
    const mesh = (await store.get({ type: 'Mesh', mesh: '', name: 'm' }))!;
    await expect(remove(manager, 'Mesh', mesh)).rejects.toMatchObject({
      violations: [{ field: 'mesh', message: 'unable to delete mesh, there are still some dataplanes attached' }],
    });
    await remove(manager, 'Dataplane', (await store.get({ type: 'Dataplane', mesh: 'm', name: 'dp' }))!);
    await remove(manager, 'Mesh', mesh);
    for (const type of ['ExternalService', 'Secret', 'TrafficRoute', 'TrafficPermission']) expect(await store.count(type, 'm')).toBe(0);
  });

  it("refuses a dataplane the mesh's constraints exclude", async () => {
    const { manager } = await setup();
    await put(manager, 'Mesh', '', 'm', { constraints: { dataplaneProxy: { requirements: [{ tags: { team: 'a' } }] } } });
    await expect(
      put(manager, 'Dataplane', 'm', 'dp', { networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web', team: 'b' } }] } }),
    ).rejects.toMatchObject({ code: 'invalid', violations: [{ field: 'networking', message: expect.stringMatching(/^dataplane cannot be a member of mesh "m" because its tags/) }] });
  });

  it('tags the inbounds of a dataplane created on a zone with the zone', async () => {
    const { store, manager } = await setup('zone', 'east');
    await store.create({ type: 'Mesh', mesh: '', name: 'm', spec: '{}' });
    await put(manager, 'Dataplane', 'm', 'dp', {
      networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' }, serviceProbe: {} }] },
    });
    const stored = JSON.parse((await store.get({ type: 'Dataplane', mesh: 'm', name: 'dp' }))!.spec);
    expect(stored.networking.inbound[0]).toEqual({ port: 80, tags: { 'mesh.io/service': 'web', 'mesh.io/zone': 'east' }, serviceProbe: {}, health: { ready: false } });
  });

  it('leaves a resource as it is when asked to skip a write that stores what it holds, defaults included', async () => {
    const { store, manager } = await setup('zone', 'east');
    await store.create({ type: 'Mesh', mesh: '', name: 'm', spec: '{}' });
    const body = { type: 'Dataplane', mesh: 'm', name: 'dp', networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] } };
    const written = await manager.apply(kind('Dataplane'), { mesh: 'm', name: 'dp' }, body);
    const changes: string[] = [];
    store.onChange((change) => changes.push(`${change.operation} ${change.type} ${change.name}`));
    // Stored with the zone tag the body leaves out: the same resource, nothing written.
    const again = await manager.apply(kind('Dataplane'), { mesh: 'm', name: 'dp' }, body, { skipUnchanged: true });
    expect(again).toEqual({ created: false, resource: written.resource, warnings: [] });
    expect((await store.get({ type: 'Dataplane', mesh: 'm', name: 'dp' }))!.version).toBe(written.resource.version);
    expect(changes).toEqual([]);
    const moved = { ...body, networking: { ...body.networking, address: '10.0.0.2' } };
    const changed = await manager.apply(kind('Dataplane'), { mesh: 'm', name: 'dp' }, moved, { skipUnchanged: true });
    expect(JSON.parse(changed.resource.spec).networking.address).toBe('10.0.0.2');
    expect(changes).toEqual(['update Dataplane dp']);
    // Without the option the same write is made again, as the API does.
    await manager.apply(kind('Dataplane'), { mesh: 'm', name: 'dp' }, moved);
    expect(changes).toEqual(['update Dataplane dp', 'update Dataplane dp']);
  });

  it('keeps rate limits on external services to service-only destinations, both ways', async () => {
    const { manager } = await setup();
    await put(manager, 'Mesh', '', 'm', {});
    await put(manager, 'ExternalService', 'm', 'es', { networking: { address: 'a.b:80' }, tags: { 'mesh.io/service': 'ext' } });
    const mixed = { sources: ALL, destinations: [{ match: { 'mesh.io/service': 'ext', version: 'v1' } }], conf: {} };
    await expect(put(manager, 'RateLimit', 'm', 'rl', mixed)).rejects.toMatchObject({
      violations: [{ field: 'ratelimit', message: 'RateLimit applied to external service only supports mesh.io/service as destination match' }],
    });
    await expect(put(manager, 'RateLimit', 'm', 'rl', { ...mixed, destinations: [{ match: { 'mesh.io/service': '*', version: 'v1' } }] })).rejects.toMatchObject({
      code: 'invalid',
    });
    await put(manager, 'RateLimit', 'm', 'rl2', { sources: ALL, destinations: [{ match: { 'mesh.io/service': 'other', version: 'v1' } }], conf: {} });
    await put(manager, 'RateLimit', 'm', 'rl3', { sources: ALL, destinations: [{ match: { 'mesh.io/service': 'new', version: 'v1' } }], conf: {} });
    await expect(put(manager, 'ExternalService', 'm', 'es2', { networking: { address: 'c.d:80' }, tags: { 'mesh.io/service': 'new' } })).rejects.toMatchObject({
      violations: [{ field: 'externalservice', message: "ExternalService would match RateLimit 'rl3' which includes incompatible destination matches" }],
    });
  });

  it('deletes the insight of a deleted dataplane', async () => {
    const { store, manager } = await setup();
    await put(manager, 'Mesh', '', 'm', {});
    await put(manager, 'Dataplane', 'm', 'dp', { networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] } });
    await store.create({ type: 'DataplaneInsight', mesh: 'm', name: 'dp', spec: '{}' });
    await remove(manager, 'Dataplane', (await store.get({ type: 'Dataplane', mesh: 'm', name: 'dp' }))!);
    expect(await store.get({ type: 'DataplaneInsight', mesh: 'm', name: 'dp' })).toBeUndefined();
  });

  it('creates the default mesh once', async () => {
    const { store, manager } = await setup();
    await manager.ensureDefaultMesh();
    await manager.ensureDefaultMesh();
    expect(await store.count('Mesh')).toBe(1);
  });
});
