// Service names and virtual IPs as an application behind a transparent proxy meets them: the zone
// binary, `mesh-dp` and real Envoy. The control plane gives each service a virtual IP from
// `dnsServer.CIDR`; the transparent proxy gets an outbound listener at it on port 80 and on the
// service's own port (not bound: traffic reaches them through the redirect), and a DNS listener
// on loopback that answers `<service>.mesh` with the virtual IP and other names through the
// system's resolvers. Addresses survive a restart and go with their service (docs/xds.md).
import { Resolver } from 'node:dns/promises';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_DATAPLANE, type DataplaneProcess, eventually, requireEnvoy, startApp, startMeshDataplane } from './testing/envoy.js';
import { freePort, startControlPlane } from './testing/process.js';

const envoy = requireEnvoy('dns-envoy.e2e');

type Instance = Awaited<ReturnType<typeof startControlPlane>>;

let cp: Instance;
let web: DataplaneProcess;
let backend: DataplaneProcess;
let backendPort: number;
let dnsPort: number;
const servers: Server[] = [];

/** A client without outbounds: transparent proxying (redirect ports nobody redirects to here) and no `outbound` at all. */
const WEB_DATAPLANE = `type: Dataplane
mesh: default
name: {{ name }}
networking:
  address: 127.0.0.1
  inbound:
    - port: {{ port }}
      servicePort: {{ appPort }}
      tags:
        mesh.io/service: web
        mesh.io/protocol: http
  transparentProxying:
    redirectPortInbound: {{ redirectInbound }}
    redirectPortOutbound: {{ redirectOutbound }}
`;

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${cp.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
};

/** What the application's resolver answers, asking the proxy's DNS listener. */
async function resolve(name: string): Promise<string[]> {
  const resolver = new Resolver({ timeout: 5_000, tries: 2 });
  resolver.setServers([`127.0.0.1:${dnsPort}`]);
  return resolver.resolve4(name);
}

type Dumped = Record<string, any>;

/** The listeners Envoy has taken (active), from its admin's config dump. */
async function envoyListeners(proxy: DataplaneProcess): Promise<Dumped[]> {
  const res = await fetch(`http://127.0.0.1:${proxy.adminPort}/config_dump?resource=dynamic_listeners`);
  const dump = (await res.json()) as { configs: Dumped[] };
  return dump.configs.flatMap((config) => (config.active_state?.listener ? [config.active_state.listener as Dumped] : []));
}

/** The listener names the control plane shows for web-1 (`/xds`). */
async function shownListeners(): Promise<string[]> {
  const { json } = await api('GET', '/meshes/default/dataplanes/web-1/xds');
  const section = (json?.configs ?? []).find((config: Dumped) => String(config['@type']).endsWith('.ListenersConfigDump'));
  return ((section?.dynamicListeners ?? []) as Dumped[]).map((entry) => String(entry.name)).sort();
}

const isVip = (address: string): boolean => Number(address.split('.')[0]) >= 240;

async function startControlPlaneOn(previous?: Instance): Promise<Instance> {
  return startControlPlane({
    ...(previous ? { workDir: previous.workDir, ports: previous.ports } : {}),
    env: { MESH_DP_SERVER_PORT: previous?.env.MESH_DP_SERVER_PORT ?? String(await freePort()) },
  });
}

beforeAll(async () => {
  if (!envoy) return;
  cp = await startControlPlaneOn();
  const backendApp = await startApp('backend');
  const webApp = await startApp('web');
  servers.push(backendApp.server, webApp.server);
  backendPort = await freePort();
  backend = await startMeshDataplane(cp, envoy, BACKEND_DATAPLANE, { name: 'backend-1', version: 'v1', port: String(backendPort), appPort: String(backendApp.port) });
  dnsPort = await freePort();
  const vars = {
    name: 'web-1',
    port: String(await freePort()),
    appPort: String(webApp.port),
    redirectInbound: String(await freePort()),
    redirectOutbound: String(await freePort()),
  };
  web = await startMeshDataplane(cp, envoy, WEB_DATAPLANE, vars, ['--dns-coredns-port', String(dnsPort)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([web, backend].map((proxy) => proxy?.stop()));
  for (const server of servers) server.close();
  await cp?.stop();
});

describe.skipIf(!envoy)('service names and virtual IPs of a transparent proxy', () => {
  let backendVip = '';

  it("answers <service>.mesh with the service's virtual IP and other names through the system's resolvers", { timeout: 90_000 }, async () => {
    const answer = await eventually(() => resolve('backend.mesh'), (addresses) => addresses.length === 1 && isVip(addresses[0] ?? ''), 'backend.mesh to resolve', 60_000);
    backendVip = answer[0] ?? '';
    // web-1 registers after backend-1: its name comes with the next pass over the mesh's names.
    await eventually(() => resolve('web.mesh'), (addresses) => addresses.length === 1, 'web.mesh to resolve', 60_000);
    expect(await resolve('web.mesh')).toEqual([expect.stringMatching(/^2(4\d|5[0-5])\./)]);
    expect(await resolve('web.mesh')).not.toEqual([backendVip]);
    // Not a name of the mesh: the hosts file answers it.
    expect(await resolve('localhost')).toEqual(['127.0.0.1']);
  });

  it('gives the proxy a listener at the virtual IP on port 80 and on the service port, not bound, without declared outbounds', { timeout: 60_000 }, async () => {
    const listeners = await eventually(() => envoyListeners(web), (list) => list.some((listener) => listener.name === `outbound:${backendVip}:80`), "web-1's VIP listeners");
    const byName = new Map(listeners.map((listener) => [String(listener.name), listener]));
    for (const port of [80, backendPort]) {
      const listener = byName.get(`outbound:${backendVip}:${port}`);
      expect(listener?.address?.socket_address).toEqual({ address: backendVip, port_value: port });
      expect(listener?.bind_to_port).toBe(false);
    }
    const dns = byName.get('mesh:dns');
    expect(dns?.address?.socket_address).toEqual({ address: '127.0.0.1', port_value: dnsPort, protocol: 'UDP' });
    expect(dns?.listener_filters?.[0]?.name).toBe('envoy.filters.udp.dns_filter');
    // Connections redirected to the outbound port are handed to the listener of their original destination.
    const redirect = [...byName.values()].find((listener) => listener.use_original_dst === true && listener.traffic_direction === 'OUTBOUND');
    expect(redirect?.name).toBe('outbound:passthrough:ipv4');

    const shown = await shownListeners();
    expect(shown).toEqual(expect.arrayContaining([`outbound:${backendVip}:80`, `outbound:${backendVip}:${backendPort}`, 'mesh:dns']));
    expect((await api('GET', '/config')).json?.dnsServer).toEqual({ CIDR: '240.0.0.0/4', domain: 'mesh', serviceVipEnabled: true, serviceVipPort: 80 });
  });

  it("names the service's DNS name among the addresses of its rules", { timeout: 60_000 }, async () => {
    const timeout = {
      type: 'MeshTimeout',
      mesh: 'default',
      name: 'to-backend',
      spec: { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { connectionTimeout: '2s' } }] },
    };
    expect((await api('PUT', '/meshes/default/meshtimeouts/to-backend', timeout)).status).toBe(201);
    const rules = (await api('GET', '/meshes/default/dataplanes/web-1/rules')).json as { items: Array<{ type: string; name?: string; addresses?: string[] }> };
    const toBackend = rules.items.find((item) => item.type === 'destinationSubset' && item.name === 'backend');
    expect(toBackend?.addresses).toEqual(['backend.mesh:80', `${backendVip}:80`, `backend.mesh:${backendPort}`, `${backendVip}:${backendPort}`]);
    expect((await api('DELETE', '/meshes/default/meshtimeouts/to-backend')).status).toBe(200);
  });

  it('keeps the virtual IPs across a restart and takes back the one of a service that goes', { timeout: 180_000 }, async () => {
    // A service added last: a fresh allocation would hand it the lowest address.
    const late = { type: 'Dataplane', mesh: 'default', name: 'aaa-1', networking: { address: '127.0.0.2', inbound: [{ port: 7000, tags: { 'mesh.io/service': 'aaa' } }] } };
    expect((await api('PUT', '/meshes/default/dataplanes/aaa-1', late)).status).toBe(201);
    const lateVip = (await eventually(() => resolve('aaa.mesh'), (addresses) => addresses.length === 1, 'aaa.mesh to resolve', 60_000))[0] ?? '';
    const before = { backend: backendVip, web: (await resolve('web.mesh'))[0], aaa: lateVip };
    expect(new Set(Object.values(before)).size).toBe(3);

    await cp.stop();
    cp = await startControlPlaneOn(cp);
    // The proxy reconnects to the restarted control plane, which renders its listeners from the stored addresses.
    await eventually(shownListeners, (names) => names.includes(`outbound:${lateVip}:7000`), "web-1's listeners after the restart", 90_000);
    expect(await shownListeners()).toEqual(expect.arrayContaining([`outbound:${before.backend}:80`, `outbound:${before.web}:80`, `outbound:${lateVip}:80`]));
    expect({ backend: (await resolve('backend.mesh'))[0], web: (await resolve('web.mesh'))[0], aaa: (await resolve('aaa.mesh'))[0] }).toEqual(before);

    expect((await api('DELETE', '/meshes/default/dataplanes/aaa-1')).status).toBe(200);
    await eventually(() => envoyListeners(web), (list) => !list.some((listener) => String(listener.name).startsWith(`outbound:${lateVip}:`)), 'the listeners of aaa to go', 60_000);
    await expect(resolve('aaa.mesh')).rejects.toThrow();
    expect(await resolve('backend.mesh')).toEqual([before.backend]);
  });
});
