// Virtual IPs (docs/xds.md, Service names and virtual IPs): each service of a mesh, each external
// service (and its host) and each VirtualOutbound host gets an address from `dnsServer.CIDR`.
// Transparent proxies get an outbound at it per port, and their DNS listener answers its names.
// Addresses are kept in the store's settings, one entry per mesh, so they survive restarts and
// every instance sharing the store hands out the same ones; they go when their name goes.
import { type DataplaneOutbound, isDnsName, SERVICE_TAG, type TagMap } from '@mesh/model';
import {
  type DataplaneResource,
  type ExternalServiceResource,
  indexPolicies,
  type PolicyIndex,
  type PolicyOf,
  type VipDomains,
  virtualOutboundEntries,
} from '@mesh/policy-matcher';

export interface VipSettings {
  /** `dnsServer.domain`: services are `<service>.<domain>`. */
  readonly domain: string;
  /** `dnsServer.CIDR`: an IPv4 range the addresses are taken from. */
  readonly cidr: string;
  /** `dnsServer.serviceVipEnabled`: services get `<service>.<domain>` names and addresses. */
  readonly serviceVipEnabled: boolean;
  /** `dnsServer.serviceVipPort`: every service is reachable on this port of its address. */
  readonly serviceVipPort: number;
}

/** What names in one mesh come from. */
export interface VipSources {
  readonly mesh: string;
  readonly dataplanes: readonly DataplaneResource[];
  readonly externalServices: readonly ExternalServiceResource[];
  readonly virtualOutbounds: readonly PolicyOf<'VirtualOutbound'>[];
  /** The tags of this mesh's services other zones offer through their zone ingresses. */
  readonly remoteServices: readonly TagMap[];
}

/**
 * One name given an address: a service (`service:<name>`), an external service's host
 * (`host:<host>`) or a VirtualOutbound host (`fqdn:<host>`); the three never share an address.
 */
export interface VipHost {
  readonly key: string;
  /** The DNS names answered with the address. */
  readonly domains: string[];
  /** Outbounds at the address: port to the tags of the destination (the first source wins). */
  readonly ports: Map<number, TagMap>;
}

/** What transparent proxies of a mesh get from its addresses. */
export interface MeshVips {
  /** Every outbound at an address, in address then port order. */
  readonly outbounds: readonly DataplaneOutbound[];
  /** The names of each address. */
  readonly domains: readonly VipDomains[];
}

export const NO_VIPS: MeshVips = { outbounds: [], domains: [] };

/** Addresses of a mesh by host key, as stored. */
export type VipAddresses = Readonly<Record<string, string>>;

/** The setting holding a mesh's addresses. */
export const vipSettingKey = (mesh: string): string => `vips.${mesh}`;

class HostSet {
  readonly hosts = new Map<string, VipHost>();

  add(key: string, domains: readonly string[], port: number, tags: TagMap): VipHost {
    let host = this.hosts.get(key);
    if (!host) this.hosts.set(key, (host = { key, domains: [], ports: new Map() }));
    for (const domain of domains) if (isDnsName(domain) && !host.domains.includes(domain)) host.domains.push(domain);
    if (port > 0 && !host.ports.has(port)) host.ports.set(port, tags);
    return host;
  }
}

/** The `host:port` of an external service's address; undefined when unreadable. */
function externalAddress(address: string): { host: string; port: number } | undefined {
  const colon = address.lastIndexOf(':');
  const port = Number(address.slice(colon + 1));
  if (colon < 0 || !Number.isInteger(port)) return undefined;
  return { host: address.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port };
}

/** Per dataplane, what its inbounds give names from (port and tags), as text: worked out once per parsed dataplane. */
const inboundKeys = new WeakMap<DataplaneResource, readonly string[]>();

function inboundKeysOf(dataplane: DataplaneResource): readonly string[] {
  let keys = inboundKeys.get(dataplane);
  if (!keys) {
    keys = (dataplane.spec.networking?.inbound ?? []).map((inbound) => JSON.stringify([inbound.port ?? 0, inbound.tags ?? {}]));
    inboundKeys.set(dataplane, keys);
  }
  return keys;
}

/** Every name of a mesh that gets an address, by key. */
export function vipHostsOf(sources: VipSources, settings: VipSettings): Map<string, VipHost> {
  const set = new HostSet();
  const index: PolicyIndex = indexPolicies({ mesh: sources.mesh, policies: { VirtualOutbound: sources.virtualOutbounds } });
  const addService = (service: string, port: number): void => {
    if (!settings.serviceVipEnabled || service === '') return;
    // `_` is no DNS label character everywhere: `my_svc` is also `my.svc.<domain>`.
    const domains = [`${service}.${settings.domain}`, `${service.replaceAll('_', '.')}.${settings.domain}`];
    const tags = { [SERVICE_TAG]: service };
    const host = set.add(`service:${service}`, domains, port, tags);
    if (!host.ports.has(settings.serviceVipPort)) host.ports.set(settings.serviceVipPort, tags);
  };
  const addVirtualOutbounds = (tags: TagMap): void => {
    for (const entry of virtualOutboundEntries(index, tags)) set.add(`fqdn:${entry.host}`, [entry.host], entry.port, entry.tags);
  };
  // The instances of a service bring the same inbound again and again: adding one twice changes
  // nothing, so each distinct one is added once (10,000 dataplanes of 1,000 services bring 1,000).
  const seen = new Set<string>();
  for (const dataplane of sources.dataplanes) {
    const inbounds = dataplane.spec.networking?.inbound ?? [];
    const keys = inboundKeysOf(dataplane);
    for (let at = 0; at < inbounds.length; at++) {
      const key = keys[at] as string;
      if (seen.has(key)) continue;
      seen.add(key);
      const inbound = inbounds[at] as NonNullable<typeof inbounds[number]>;
      const tags = inbound.tags ?? {};
      addService(tags[SERVICE_TAG] ?? '', inbound.port ?? 0);
      addVirtualOutbounds(tags);
    }
  }
  for (const tags of sources.remoteServices) {
    addService(tags[SERVICE_TAG] ?? '', 0);
    addVirtualOutbounds(tags);
  }
  for (const externalService of sources.externalServices) {
    const spec = externalService.spec;
    const service = spec.tags?.[SERVICE_TAG] ?? '';
    const address = externalAddress(spec.networking?.address ?? '');
    const tags = { [SERVICE_TAG]: service };
    addService(service, address?.port ?? 0);
    if (address && !spec.networking?.disableHostDNSEntry && service !== '') {
      const host = set.add(`host:${address.host}`, [address.host], address.port, tags);
      // A host named in DNS is reachable on the service port too, unless another source took it.
      if (host.domains.length > 0 && !host.ports.has(settings.serviceVipPort)) host.ports.set(settings.serviceVipPort, tags);
    }
    addVirtualOutbounds(tags);
  }
  return set.hosts;
}

/** An IPv4 CIDR as the first and last numbers of its range. */
export function parseIpv4Cidr(cidr: string): { first: number; last: number } | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr.trim());
  if (!match) return undefined;
  const octets = match.slice(1, 5).map(Number);
  const prefix = Number(match[5]);
  if (octets.some((octet) => octet > 255) || prefix > 32) return undefined;
  const address = octets.reduce((value, octet) => value * 256 + octet, 0);
  const size = 2 ** (32 - prefix);
  const first = Math.floor(address / size) * size;
  return { first, last: first + size - 1 };
}

const ipv4Number = (address: string): number | undefined => {
  const octets = address.split('.').map(Number);
  if (octets.length !== 4 || octets.some((octet) => !Number.isInteger(octet) || octet < 0 || octet > 255)) return undefined;
  return octets.reduce((value, octet) => value * 256 + octet, 0);
};

const ipv4Text = (value: number): string => [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');

export interface Allocation {
  readonly addresses: VipAddresses;
  /** Keys no address was left for. */
  readonly unallocated: readonly string[];
}

/**
 * Addresses for the keys: each keeps the one it had while it is inside the range, new keys take
 * the lowest free ones in key order (the range's network and broadcast addresses are skipped
 * when it has more than two); keys not given lose theirs.
 */
export function allocateVips(previous: VipAddresses, keys: readonly string[], cidr: string): Allocation {
  const range = parseIpv4Cidr(cidr);
  if (!range) throw new Error(`dnsServer.CIDR "${cidr}" is not an IPv4 CIDR`);
  const spare = range.last - range.first > 1 ? 1 : 0;
  const [low, high] = [range.first + spare, range.last - spare];
  const addresses: Record<string, string> = {};
  const used = new Set<number>();
  const pending: string[] = [];
  for (const key of [...keys].sort()) {
    const kept = Object.hasOwn(previous, key) ? ipv4Number(previous[key] ?? '') : undefined;
    if (kept !== undefined && kept >= low && kept <= high && !used.has(kept)) {
      used.add(kept);
      addresses[key] = ipv4Text(kept);
    } else pending.push(key);
  }
  let next = low;
  const unallocated: string[] = [];
  for (const key of pending) {
    while (next <= high && used.has(next)) next++;
    if (next > high) {
      unallocated.push(key);
      continue;
    }
    used.add(next);
    addresses[key] = ipv4Text(next);
  }
  return { addresses, unallocated };
}

/** The outbounds and names of the hosts that have an address. */
export function meshVipsOf(hosts: ReadonlyMap<string, VipHost>, addresses: VipAddresses): MeshVips {
  const outbounds: DataplaneOutbound[] = [];
  const domains: VipDomains[] = [];
  const ordered = [...hosts.values()].flatMap((host) => {
    const address = addresses[host.key];
    return address === undefined ? [] : [{ host, address, order: ipv4Number(address) ?? 0 }];
  });
  for (const { host, address } of ordered.sort((a, b) => a.order - b.order)) {
    if (host.domains.length > 0) domains.push({ address, domains: [...host.domains] });
    for (const port of [...host.ports.keys()].sort((a, b) => a - b)) outbounds.push({ address, port, tags: { ...host.ports.get(port) }, service: undefined });
  }
  return { outbounds, domains };
}

/** Whether two sets of addresses are the same. */
export function sameAddresses(a: VipAddresses, b: VipAddresses): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}
