import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSpec, getKind, SERVICE_TAG } from '@mesh/model';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { ProxyConfigService } from './service.js';
import { VipAllocator } from './vip-allocator.js';
import type { MeshVips, VipSettings } from './vips.js';

const SETTINGS: VipSettings = { domain: 'mesh', cidr: '240.0.0.0/4', serviceVipEnabled: true, serviceVipPort: 80 };

interface Logged {
  level: 'info' | 'error';
  details: object;
  message: string;
}

/** A store on disk, allocators over it (each one an instance of the control plane) and what they published and logged. */
class World {
  readonly dir = mkdtempSync(join(tmpdir(), 'mesh-vips-'));
  store = this.open();
  readonly published = new Map<string, MeshVips>();
  readonly logged: Logged[] = [];
  private readonly allocators: VipAllocator[] = [];

  private open(): SqliteResourceStore {
    return new SqliteResourceStore({ path: join(this.dir, 'mesh.db') });
  }

  async reopen(): Promise<void> {
    await this.stopAllocators();
    await this.store.close();
    this.store = this.open();
  }

  async allocator(options: { settings?: Partial<VipSettings>; leader?: boolean; onChange?: (mesh: string, vips: MeshVips) => void } = {}): Promise<VipAllocator> {
    const allocator = new VipAllocator({
      store: this.store,
      settings: { ...SETTINGS, ...options.settings },
      putSetting: (key, value) => this.store.putSetting(key, value),
      isLeader: () => options.leader ?? true,
      onChange: (mesh, vips) => {
        this.published.set(mesh, vips);
        options.onChange?.(mesh, vips);
      },
      log: {
        info: (details, message) => this.logged.push({ level: 'info', details, message }),
        error: (details, message) => this.logged.push({ level: 'error', details, message }),
      },
      debounceMs: 1,
    });
    this.allocators.push(allocator);
    await allocator.start();
    return allocator;
  }

  async put(type: string, mesh: string, name: string, body: object): Promise<void> {
    const kind = getKind(type);
    const decoded = decodeSpec(kind, body);
    if (!decoded.ok) throw new Error(`${type} ${name}: ${decoded.message}`);
    const spec = JSON.stringify(kind.applyDefaults ? kind.applyDefaults(decoded.spec) : decoded.spec);
    const key = { type, mesh, name };
    const current = await this.store.get(key);
    if (current) await this.store.update({ ...key, spec, version: current.version });
    else await this.store.create({ ...key, spec });
  }

  async stored(mesh: string): Promise<Record<string, string>> {
    return JSON.parse((await this.store.getSetting(`vips.${mesh}`)) ?? '{}') as Record<string, string>;
  }

  private async stopAllocators(): Promise<void> {
    await Promise.all(this.allocators.splice(0).map((allocator) => allocator.stop()));
  }

  async close(): Promise<void> {
    await this.stopAllocators();
    await this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const dataplane = (address: string, service: string, port = 8080, extra: object = {}) => ({
  networking: { address, inbound: [{ port, tags: { [SERVICE_TAG]: service } }], ...extra },
});

const TRANSPARENT = { transparentProxying: { redirectPortInbound: 15006, redirectPortOutbound: 15001 } };

let world: World | undefined;

async function newWorld(): Promise<World> {
  world = new World();
  await world.put('Mesh', '', 'default', {});
  return world;
}

afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('VipAllocator', () => {
  it('gives each service, external service host and VirtualOutbound host an address, with outbounds on port 80 and its own port', async () => {
    const w = await newWorld();
    await w.put('Dataplane', 'default', 'backend-1', dataplane('10.0.0.1', 'backend', 8080));
    await w.put('Dataplane', 'default', 'web-1', dataplane('10.0.0.2', 'my_web', 9000));
    await w.put('ExternalService', 'default', 'httpbin', { networking: { address: 'httpbin.org:443' }, tags: { [SERVICE_TAG]: 'httpbin' } });
    await w.put('VirtualOutbound', 'default', 'instances', {
      selectors: [{ match: { [SERVICE_TAG]: 'backend' } }],
      conf: { host: '{{.svc}}.v1.internal', port: '7000', parameters: [{ name: 'svc', tagKey: SERVICE_TAG }] },
    });
    await w.allocator();

    expect(await w.stored('default')).toEqual({
      'fqdn:backend.v1.internal': '240.0.0.1',
      'host:httpbin.org': '240.0.0.2',
      'service:backend': '240.0.0.3',
      'service:httpbin': '240.0.0.4',
      'service:my_web': '240.0.0.5',
    });
    const vips = w.published.get('default');
    expect(vips?.domains).toEqual([
      { address: '240.0.0.1', domains: ['backend.v1.internal'] },
      { address: '240.0.0.2', domains: ['httpbin.org'] },
      { address: '240.0.0.3', domains: ['backend.mesh'] },
      { address: '240.0.0.4', domains: ['httpbin.mesh'] },
      { address: '240.0.0.5', domains: ['my_web.mesh', 'my.web.mesh'] },
    ]);
    expect(vips?.outbounds.map((outbound) => `${outbound.address}:${outbound.port} ${outbound.tags?.[SERVICE_TAG]}`)).toEqual([
      '240.0.0.1:7000 backend',
      '240.0.0.2:80 httpbin',
      '240.0.0.2:443 httpbin',
      '240.0.0.3:80 backend',
      '240.0.0.3:8080 backend',
      '240.0.0.4:80 httpbin',
      '240.0.0.4:443 httpbin',
      '240.0.0.5:80 my_web',
      '240.0.0.5:9000 my_web',
    ]);
  });

  it('names each instance of a service by all of its inbound tags and ports, many instances alike or not', async () => {
    const w = await newWorld();
    for (let at = 0; at < 20; at++) await w.put('Dataplane', 'default', `backend-${at}`, dataplane(`10.0.0.${at + 1}`, 'backend'));
    await w.put('Dataplane', 'default', 'backend-v2', { networking: { address: '10.0.1.1', inbound: [{ port: 8080, tags: { [SERVICE_TAG]: 'backend', version: 'v2' } }] } });
    await w.put('Dataplane', 'default', 'backend-admin', dataplane('10.0.1.2', 'backend', 9090));
    await w.put('VirtualOutbound', 'default', 'versions', {
      selectors: [{ match: { [SERVICE_TAG]: 'backend' } }],
      conf: { host: '{{.version}}.backend.internal', port: '7000', parameters: [{ name: 'version', tagKey: 'version' }] },
    });
    await w.allocator();

    expect(Object.keys(await w.stored('default'))).toEqual(['fqdn:v2.backend.internal', 'service:backend']);
    expect(w.published.get('default')?.outbounds.map((outbound) => `${outbound.address}:${outbound.port} ${JSON.stringify(outbound.tags)}`)).toEqual([
      '240.0.0.1:7000 {"version":"v2"}',
      '240.0.0.2:80 {"mesh.io/service":"backend"}',
      '240.0.0.2:8080 {"mesh.io/service":"backend"}',
      '240.0.0.2:9090 {"mesh.io/service":"backend"}',
    ]);
  });

  it('keeps addresses across restarts, gives new services free ones and takes back those of services that went', async () => {
    const w = await newWorld();
    await w.put('Dataplane', 'default', 'b-1', dataplane('10.0.0.1', 'b'));
    await w.put('Dataplane', 'default', 'c-1', dataplane('10.0.0.2', 'c'));
    await w.allocator();
    expect(await w.stored('default')).toEqual({ 'service:b': '240.0.0.1', 'service:c': '240.0.0.2' });

    await w.reopen();
    // A name sorting first does not move the others.
    await w.put('Dataplane', 'default', 'a-1', dataplane('10.0.0.3', 'a'));
    await w.allocator();
    expect(await w.stored('default')).toEqual({ 'service:a': '240.0.0.3', 'service:b': '240.0.0.1', 'service:c': '240.0.0.2' });

    await w.store.delete({ type: 'Dataplane', mesh: 'default', name: 'b-1' });
    await expect.poll(() => w.stored('default')).toEqual({ 'service:a': '240.0.0.3', 'service:c': '240.0.0.2' });
    await expect.poll(() => w.published.get('default')?.domains.map((entry) => entry.domains[0])).toEqual(['c.mesh', 'a.mesh']);
    await w.put('Dataplane', 'default', 'd-1', dataplane('10.0.0.4', 'd'));
    await expect.poll(() => w.stored('default')).toEqual({ 'service:a': '240.0.0.3', 'service:c': '240.0.0.2', 'service:d': '240.0.0.1' });
  });

  it('follows a proxy that changes its services, and keeps every name while proxies only move to other addresses', async () => {
    const w = await newWorld();
    await w.put('Dataplane', 'default', 'a-1', dataplane('10.0.0.1', 'a'));
    await w.put('Dataplane', 'default', 'b-1', dataplane('10.0.0.2', 'b'));
    await w.allocator();
    expect(await w.stored('default')).toEqual({ 'service:a': '240.0.0.1', 'service:b': '240.0.0.2' });

    await w.put('Dataplane', 'default', 'a-1', dataplane('10.0.1.1', 'a'));
    await w.put('Dataplane', 'default', 'b-1', dataplane('10.0.1.2', 'c'));
    await expect.poll(() => w.stored('default')).toEqual({ 'service:a': '240.0.0.1', 'service:c': '240.0.0.2' });
    await w.put('Dataplane', 'default', 'b-1', dataplane('10.0.1.2', 'c', 9090));
    await expect.poll(() => w.published.get('default')?.outbounds.map((outbound) => `${outbound.address}:${outbound.port}`)).toEqual([
      '240.0.0.1:80',
      '240.0.0.1:8080',
      '240.0.0.2:80',
      '240.0.0.2:9090',
    ]);
    await w.put('Dataplane', 'default', 'a-1', dataplane('10.0.2.1', 'a'));
    await w.put('Dataplane', 'default', 'a-2', dataplane('10.0.2.2', 'a', 7070));
    await expect.poll(() => w.published.get('default')?.outbounds.map((outbound) => `${outbound.address}:${outbound.port}`)).toEqual([
      '240.0.0.1:80',
      '240.0.0.1:7070',
      '240.0.0.1:8080',
      '240.0.0.2:80',
      '240.0.0.2:9090',
    ]);
    expect(await w.stored('default')).toEqual({ 'service:a': '240.0.0.1', 'service:c': '240.0.0.2' });

    // More instances of a service, and fewer, while one is left: the same names.
    await w.put('Dataplane', 'default', 'c-2', dataplane('10.0.2.3', 'c', 9090));
    await w.store.delete({ type: 'Dataplane', mesh: 'default', name: 'a-1' });
    await w.put('Dataplane', 'default', 'd-1', dataplane('10.0.2.4', 'd'));
    await expect.poll(() => w.stored('default')).toEqual({ 'service:a': '240.0.0.1', 'service:c': '240.0.0.2', 'service:d': '240.0.0.3' });
    // The last instance of a service goes, and its name with it.
    await w.store.delete({ type: 'Dataplane', mesh: 'default', name: 'a-2' });
    await expect.poll(() => w.stored('default')).toEqual({ 'service:c': '240.0.0.2', 'service:d': '240.0.0.3' });
    await w.store.delete({ type: 'Dataplane', mesh: 'default', name: 'b-1' });
    await w.store.delete({ type: 'Dataplane', mesh: 'default', name: 'c-2' });
    await expect.poll(() => w.stored('default')).toEqual({ 'service:d': '240.0.0.3' });
  });

  it('gives a VirtualOutbound host to a new instance whose tags make one, though its service has a name already', async () => {
    const w = await newWorld();
    await w.put('VirtualOutbound', 'default', 'versions', {
      selectors: [{ match: { [SERVICE_TAG]: '*', version: '*' } }],
      conf: { host: '{{.svc}}.{{.version}}.internal', port: '7000', parameters: [{ name: 'svc', tagKey: SERVICE_TAG }, { name: 'version' }] },
    });
    await w.put('Dataplane', 'default', 'a-1', { networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { [SERVICE_TAG]: 'a', version: 'v1' } }] } });
    await w.allocator();
    expect(Object.keys(await w.stored('default'))).toEqual(['fqdn:a.v1.internal', 'service:a']);
    await w.put('Dataplane', 'default', 'a-2', { networking: { address: '10.0.0.2', inbound: [{ port: 8080, tags: { [SERVICE_TAG]: 'a', version: 'v2' } }] } });
    await expect.poll(async () => Object.keys(await w.stored('default')).sort()).toEqual(['fqdn:a.v1.internal', 'fqdn:a.v2.internal', 'service:a']);
  });

  it('logs a clear error for the names left without an address when the CIDR is exhausted', async () => {
    const w = await newWorld();
    for (const service of ['a', 'b', 'c']) await w.put('Dataplane', 'default', `${service}-1`, dataplane('10.0.0.1', service));
    await w.allocator({ settings: { cidr: '240.0.0.0/30' } });
    expect(await w.stored('default')).toEqual({ 'service:a': '240.0.0.1', 'service:b': '240.0.0.2' });
    expect(w.logged.filter((entry) => entry.level === 'error')).toEqual([
      {
        level: 'error',
        details: { mesh: 'default', cidr: '240.0.0.0/30', names: ['service:c'] },
        message: 'no free virtual IP left in dnsServer.CIDR 240.0.0.0/30: service:c of mesh default get none',
      },
    ]);
    expect(w.published.get('default')?.domains.flatMap((entry) => entry.domains)).toEqual(['a.mesh', 'b.mesh']);
  });

  it('leaves writing to the leader: another instance hands out the stored addresses', async () => {
    const w = await newWorld();
    await w.put('Dataplane', 'default', 'b-1', dataplane('10.0.0.1', 'b'));
    await w.store.putSetting('vips.default', JSON.stringify({ 'service:b': '240.0.0.9' }));
    await w.put('Dataplane', 'default', 'a-1', dataplane('10.0.0.2', 'a'));
    await w.allocator({ leader: false });
    expect(await w.stored('default')).toEqual({ 'service:b': '240.0.0.9' });
    expect(w.published.get('default')?.domains).toEqual([
      { address: '240.0.0.1', domains: ['a.mesh'] },
      { address: '240.0.0.9', domains: ['b.mesh'] },
    ]);
  });

  it('takes in a write announced just before a flush (a leader taking over writes every address at once)', async () => {
    const w = await newWorld();
    const allocator = await w.allocator({ settings: {} });
    await w.put('Dataplane', 'default', 'a-1', dataplane('10.0.0.1', 'a'));
    await allocator.flush();
    expect(await w.stored('default')).toEqual({ 'service:a': '240.0.0.1' });
  });

  it('gives only transparent proxies the outbounds, narrowed by reachableServices, and re-renders only them when addresses change', async () => {
    const w = await newWorld();
    const proxyConfigs = new ProxyConfigService({ store: w.store });
    await proxyConfigs.start();
    try {
      const any = [{ match: { [SERVICE_TAG]: '*' } }];
      await w.put('TrafficRoute', 'default', 'route-all', { sources: any, destinations: any, conf: { destination: { [SERVICE_TAG]: '*' } } });
      await w.put('Dataplane', 'default', 'backend-1', dataplane('10.0.0.1', 'backend', 8080));
      await w.put('Dataplane', 'default', 'redis-1', dataplane('10.0.0.2', 'redis', 6379));
      await w.put('Dataplane', 'default', 'plain-1', dataplane('10.0.0.3', 'plain', 8080));
      await w.put('Dataplane', 'default', 'web-1', dataplane('10.0.0.4', 'web', 8080, TRANSPARENT));
      await w.put('Dataplane', 'default', 'narrow-1', dataplane('10.0.0.5', 'narrow', 8080, { transparentProxying: { ...TRANSPARENT.transparentProxying, reachableServices: ['redis'] } }));
      await w.allocator({ onChange: (mesh, vips) => proxyConfigs.setMeshVips(mesh, vips) });
      await proxyConfigs.settled();
      const mesh = proxyConfigs.mesh('default');
      const outboundListeners = (name: string) =>
        (mesh?.proxyConfig(name)?.listeners ?? []).filter((listener) => listener.name.startsWith('outbound:2')).map((listener) => [listener.name, listener.bindToPort]);
      const backend = await w.stored('default');
      const expected = ['backend', 'narrow', 'plain', 'redis', 'web'].flatMap((service) => {
        const port = service === 'redis' ? 6379 : 8080;
        return [`outbound:${backend[`service:${service}`]}:80`, `outbound:${backend[`service:${service}`]}:${port}`];
      });
      expect(outboundListeners('web-1').map(([name]) => name).sort()).toEqual(expected.sort());
      expect(outboundListeners('web-1').every(([, bindToPort]) => bindToPort === false)).toBe(true);
      expect(outboundListeners('narrow-1').map(([name]) => name)).toEqual([`outbound:${backend['service:redis']}:6379`, `outbound:${backend['service:redis']}:80`].sort());
      expect(outboundListeners('plain-1')).toEqual([]);

      const plain = mesh?.proxyConfig('plain-1');
      await w.put('Dataplane', 'default', 'db-1', dataplane('10.0.0.6', 'db', 5432));
      await expect.poll(async () => {
        await proxyConfigs.settled();
        const dbVip = (await w.stored('default'))['service:db'];
        return outboundListeners('web-1').some(([name]) => name === `outbound:${dbVip}:5432`);
      }).toBe(true);
      // A proxy without transparent proxying is not rendered again for a new address.
      expect(mesh?.proxyConfig('plain-1')).toBe(plain);
    } finally {
      await proxyConfigs.stop();
    }
  });
});
