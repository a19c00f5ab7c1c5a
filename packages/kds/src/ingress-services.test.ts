// The services a zone's ingresses advertise (docs/multizone.md, Zone ingresses).
import { getKind } from '@mesh/model';
import { afterEach, describe, expect, it } from 'vitest';
import { ZoneIngressServices } from './ingress-services.js';
import { eventually, openSide, put, quietLogger } from './testing.js';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

function services(tagFilters: string[] = []) {
  const side = openSide('zone', 'east');
  const watcher = new ZoneIngressServices({ manager: side.manager, zone: 'east', tagFilters, isLeader: () => true, logger: quietLogger });
  watcher.start();
  stops.push(() => watcher.stop());
  return { side, watcher };
}

const inbound = (service: string, extra: Record<string, unknown> = {}) => ({ port: 8080, tags: { 'mesh.io/service': service, 'mesh.io/protocol': 'http' }, ...extra });
const INGRESS = { networking: { address: '10.0.0.10', port: 10001, advertisedAddress: '192.0.2.10', advertisedPort: 10001 } };

async function advertised(side: ReturnType<typeof openSide>, name = 'ingress') {
  const stored = await side.store.get({ type: 'ZoneIngress', mesh: '', name });
  return JSON.parse(stored!.spec).availableServices ?? [];
}

describe('zone ingress available services', () => {
  it('counts ready inbounds of the zone’s dataplanes per mesh and tags, sorted, and external services reached through the zone egress', async () => {
    const { side, watcher } = services();
    await put(side, 'Mesh', '', 'default', {});
    await put(side, 'Mesh', '', 'egress', { mtls: { enabledBackend: 'ca', backends: [{ name: 'ca', type: 'builtin' }] }, routing: { zoneEgress: true } });
    await put(side, 'ZoneIngress', '', 'ingress', INGRESS);
    await put(side, 'Dataplane', 'default', 'web-1', { networking: { address: '10.0.0.1', inbound: [inbound('web')] } });
    await put(side, 'Dataplane', 'default', 'web-2', { networking: { address: '10.0.0.2', inbound: [inbound('web')] } });
    await put(side, 'Dataplane', 'default', 'backend-1', { networking: { address: '10.0.0.3', inbound: [inbound('backend'), { ...inbound('backend-admin'), port: 9090 }] } });
    await put(side, 'Dataplane', 'default', 'sick', { networking: { address: '10.0.0.4', inbound: [inbound('sick', { health: { ready: false } })] } });
    await put(side, 'ExternalService', 'egress', 'httpbin', { networking: { address: 'httpbin.org:443' }, tags: { 'mesh.io/service': 'httpbin', 'mesh.io/zone': 'east' } });
    await put(side, 'ExternalService', 'default', 'direct', { networking: { address: 'example.com:443' }, tags: { 'mesh.io/service': 'direct', 'mesh.io/zone': 'east' } });
    await watcher.refresh();
    expect(await advertised(side)).toEqual([
      { tags: { 'mesh.io/protocol': 'http', 'mesh.io/service': 'backend', 'mesh.io/zone': 'east' }, instances: 1, mesh: 'default' },
      { tags: { 'mesh.io/protocol': 'http', 'mesh.io/service': 'backend-admin', 'mesh.io/zone': 'east' }, instances: 1, mesh: 'default' },
      { tags: { 'mesh.io/protocol': 'http', 'mesh.io/service': 'web', 'mesh.io/zone': 'east' }, instances: 2, mesh: 'default' },
      { tags: { 'mesh.io/service': 'httpbin', 'mesh.io/zone': 'east' }, instances: 1, mesh: 'egress', externalService: true },
    ]);
  });

  it('follows dataplanes as they come and go, keeps only the filtered tag keys, and writes nothing when nothing changed', async () => {
    const { side, watcher } = services(['mesh.io/']);
    await put(side, 'Mesh', '', 'default', {});
    await put(side, 'ZoneIngress', '', 'ingress', INGRESS);
    await put(side, 'Dataplane', 'default', 'web-1', { networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web', version: 'v1' } }] } });
    await eventually(async () => (await advertised(side)).length === 1, 'the first service');
    expect(await advertised(side)).toEqual([{ tags: { 'mesh.io/service': 'web', 'mesh.io/zone': 'east' }, instances: 1, mesh: 'default' }]);
    const version = (await side.store.get({ type: 'ZoneIngress', mesh: '', name: 'ingress' }))!.version;
    await watcher.refresh();
    expect((await side.store.get({ type: 'ZoneIngress', mesh: '', name: 'ingress' }))!.version).toBe(version);
    await side.manager.remove(getKind('Dataplane'), { mesh: 'default', name: 'web-1' });
    await eventually(async () => (await advertised(side)).length === 0, 'the service to go');
  });

  it('leaves alone the ingresses of other zones that the global passed on', async () => {
    const { side, watcher } = services();
    await put(side, 'Mesh', '', 'default', {});
    await side.manager.applySynced({
      origin: 'global',
      full: false,
      owns: () => true,
      kinds: [{ kind: getKind('ZoneIngress'), resources: [{ mesh: '', name: 'west.ingress', spec: JSON.stringify({ ...INGRESS, zone: 'west' }) }], removed: [] }],
    });
    await put(side, 'Dataplane', 'default', 'web-1', { networking: { address: '10.0.0.1', inbound: [inbound('web')] } });
    await watcher.refresh();
    expect(await advertised(side, 'west.ingress')).toEqual([]);
  });
});
