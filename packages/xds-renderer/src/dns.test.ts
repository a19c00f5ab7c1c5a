// Transparent proxies and virtual IPs: an outbound listener per reachable service at its virtual
// IP, and the DNS listener answering the names of those IPs.
import type { DataplaneOutbound } from '@mesh/model';
import { describe, expect, it } from 'vitest';
import type { JsonObject, Listener } from './envoy.js';
import { prepareMeshContext } from './mesh-context.js';
import { renderProxyConfig } from './proxy.js';
import { dataplane, policy } from './test-fixtures.js';
import { envoySchemaErrors } from './testing/envoy-schema.js';

const VIP_OUTBOUNDS: DataplaneOutbound[] = [
  { address: '240.0.0.1', port: 80, tags: { 'mesh.io/service': 'backend' }, service: undefined },
  { address: '240.0.0.1', port: 8080, tags: { 'mesh.io/service': 'backend' }, service: undefined },
  { address: '240.0.0.2', port: 80, tags: { 'mesh.io/service': 'redis' }, service: undefined },
  { address: '240.0.0.2', port: 6379, tags: { 'mesh.io/service': 'redis' }, service: undefined },
];
const VIP_DOMAINS = [
  { address: '240.0.0.1', domains: ['backend.mesh'] },
  { address: '240.0.0.2', domains: ['redis.mesh'] },
];

const ANY = [{ match: { 'mesh.io/service': '*' } }];
const ROUTE_ALL = policy('TrafficRoute', 'route-all', { sources: ANY, destinations: ANY, conf: { destination: { 'mesh.io/service': '*' } } });

const backend = dataplane('backend-1', { address: '10.0.0.2', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' } }] });
const redis = dataplane('redis-1', { address: '10.0.0.3', inbound: [{ port: 6379, tags: { 'mesh.io/service': 'redis' } }] });

const transparent = (extra: object = {}, outbound: object[] = []) =>
  dataplane('web-1', {
    address: '10.0.0.1',
    inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }],
    outbound,
    transparentProxying: { redirectPortInbound: 15006, redirectPortOutbound: 15001, ...extra },
  });

function render(proxy: ReturnType<typeof transparent>, dnsPort: number | null = 15053) {
  const context = prepareMeshContext({
    snapshot: { mesh: 'default', policies: { TrafficRoute: [ROUTE_ALL] }, vipOutbounds: VIP_OUTBOUNDS },
    dataplanes: [backend, redis, proxy],
    vipDomains: VIP_DOMAINS,
  });
  return renderProxyConfig({ context, dataplane: proxy, ...(dnsPort === null ? {} : { metadata: { dnsPort } }) });
}

const listener = (listeners: readonly Listener[], name: string): Listener | undefined => listeners.find((candidate) => candidate.name === name);

/** The cluster an outbound listener sends to: its TCP proxy's, or its HTTP route's. */
function clusterOf(outbound: Listener | undefined): string | undefined {
  const filter = ((outbound?.filterChains as JsonObject[] | undefined)?.[0]?.filters as JsonObject[] | undefined)?.[0]?.typedConfig as JsonObject | undefined;
  if (typeof filter?.cluster === 'string') return filter.cluster;
  const route = (((filter?.routeConfig as JsonObject | undefined)?.virtualHosts as JsonObject[] | undefined)?.[0]?.routes as JsonObject[] | undefined)?.[0]?.route as JsonObject | undefined;
  return typeof route?.cluster === 'string' ? route.cluster : undefined;
}

function dnsTable(config: ReturnType<typeof render>): Array<{ name: string; addresses: string[] }> {
  const filter = (listener(config.listeners, 'mesh:dns')?.listenerFilters as JsonObject[] | undefined)?.[0]?.typedConfig as JsonObject | undefined;
  const domains = ((filter?.serverConfig as JsonObject).inlineDnsTable as JsonObject).virtualDomains as JsonObject[];
  return domains.map((domain) => ({ name: domain.name as string, addresses: ((domain.endpoint as JsonObject).addressList as JsonObject).address as string[] }));
}

describe('transparent proxies and virtual IPs', () => {
  it('get an unbound outbound listener at each virtual IP and port, routed to the service', () => {
    const config = render(transparent());
    for (const [name, cluster] of [
      ['outbound:240.0.0.1:80', 'backend'],
      ['outbound:240.0.0.1:8080', 'backend'],
      ['outbound:240.0.0.2:80', 'redis'],
      ['outbound:240.0.0.2:6379', 'redis'],
    ] as const) {
      const outbound = listener(config.listeners, name);
      expect(outbound?.bindToPort).toBe(false);
      expect(clusterOf(outbound)).toBe(cluster);
    }
    expect(config.clusters.map((cluster) => cluster.name)).toEqual(expect.arrayContaining(['backend', 'redis']));
    // The redirected connections are handed to them by their original destination.
    expect(listener(config.listeners, 'outbound:passthrough:ipv4')?.useOriginalDst).toBe(true);
  });

  it('reach only reachableServices, and keep the declared outbounds', () => {
    const config = render(transparent({ reachableServices: ['redis'] }, [{ port: 10001, tags: { 'mesh.io/service': 'backend' } }]));
    const outbounds = config.listeners.map((entry) => String(entry.name)).filter((name) => name.startsWith('outbound:') && !name.includes('passthrough'));
    expect(outbounds.sort()).toEqual(['outbound:127.0.0.1:10001', 'outbound:240.0.0.2:6379', 'outbound:240.0.0.2:80']);
    expect(clusterOf(listener(config.listeners, 'outbound:127.0.0.1:10001'))).toBe('backend');
    expect(dnsTable(config)).toEqual([{ name: 'redis.mesh', addresses: ['240.0.0.2'] }]);
  });

  it('get a DNS listener on loopback answering the names of their virtual IPs, the rest through the system resolvers', () => {
    const config = render(transparent(), 15053);
    const dns = listener(config.listeners, 'mesh:dns');
    expect(dns?.address).toEqual({ socketAddress: { protocol: 'UDP', address: '127.0.0.1', portValue: 15053 } });
    const filter = (dns?.listenerFilters as JsonObject[])[0];
    expect(filter?.name).toBe('envoy.filters.udp.dns_filter');
    expect((filter?.typedConfig as JsonObject).clientConfig).toEqual({ maxPendingLookups: 256 });
    expect(dnsTable(config)).toEqual([
      { name: 'backend.mesh', addresses: ['240.0.0.1'] },
      { name: 'redis.mesh', addresses: ['240.0.0.2'] },
    ]);
    expect(config.listeners.flatMap((entry) => envoySchemaErrors(entry))).toEqual([]);
  });

  it('answer with the IPv4-mapped IPv6 address too when they redirect IPv6', () => {
    const config = render(transparent({ redirectPortInboundV6: 15010 }));
    expect(dnsTable(config)[0]).toEqual({ name: 'backend.mesh', addresses: ['240.0.0.1', '::ffff:240.0.0.1'] });
  });

  it('get no DNS listener when the agent runs no DNS, nor without transparent proxying', () => {
    expect(listener(render(transparent(), null).listeners, 'mesh:dns')).toBeUndefined();
    const plain = dataplane('plain-1', { address: '10.0.0.9', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'plain' } }] });
    const config = render(plain, 15053);
    expect(listener(config.listeners, 'mesh:dns')).toBeUndefined();
    expect(config.listeners.some((entry) => String(entry.name).startsWith('outbound:240.'))).toBe(false);
  });
});
