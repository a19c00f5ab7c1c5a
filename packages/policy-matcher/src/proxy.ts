// A dataplane as matching sees it: the tag sets selectors are tried on, its inbound interfaces
// (with the synthetic metrics inbound) and its outbound interfaces (with VIP outbounds).
import { dataplaneTagSets, type DataplaneOutbound, type DataplaneSpec, type MeshSpec, outboundTags, SERVICE_TAG, type TagMap } from '@mesh/model';
import { type CompiledSelector, selectorMatches } from './selector.js';
import type { MeshSnapshot } from './snapshot.js';

export const PASS_THROUGH_SERVICE = 'pass_through';

export interface InboundInterface {
  readonly dataplaneIp: string;
  readonly dataplanePort: number;
  readonly workloadIp: string;
  readonly workloadPort: number;
}

export interface ProxyInbound {
  /** `dataplaneIp:port:workloadPort`, the inspection name. */
  readonly name: string;
  /** Absent for the metrics inbound, which inspection shows without a service. */
  readonly service: string | undefined;
  readonly tags: TagMap;
  readonly interface: InboundInterface;
}

export interface ProxyOutbound {
  /** `address:port` (address default 127.0.0.1, IPv6 bracketed), the inspection name. */
  readonly name: string;
  readonly service: string;
  readonly tags: TagMap;
}

export interface ProxyView {
  /** Each inbound's tags, then the gateway's: a selector matches the proxy if it matches one of them. */
  readonly tagSets: readonly TagMap[];
  readonly inbounds: readonly ProxyInbound[];
  readonly outbounds: readonly ProxyOutbound[];
  readonly isBuiltinGateway: boolean;
}

/** Empty selectors match every proxy, even one without tags, as the reference matches gateway tags last. */
export const proxyMatches = (proxy: ProxyView, selector: CompiledSelector): boolean =>
  selector.isEmpty || proxy.tagSets.some((tags) => selectorMatches(selector.tags, tags));

function inboundInterface(address: string, inbound: { address?: string | undefined; port?: number | undefined; serviceAddress?: string | undefined; servicePort?: number | undefined }): InboundInterface {
  const dataplaneIp = inbound.address || address;
  const dataplanePort = inbound.port ?? 0;
  return { dataplaneIp, dataplanePort, workloadIp: inbound.serviceAddress || dataplaneIp, workloadPort: inbound.servicePort || dataplanePort };
}

const inboundName = (iface: InboundInterface): string => `${iface.dataplaneIp}:${iface.dataplanePort}:${iface.workloadPort}`;

const outboundName = (address: string, port: number): string => (address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`);

interface PrometheusConf {
  port?: number;
  tags?: TagMap;
}

/** The prometheus port and tags of the mesh's enabled backend, overridden by the dataplane's own `metrics`. */
function metricsEndpoint(meshSpec: MeshSpec | undefined, dataplane: DataplaneSpec): { port: number; tags: TagMap } | undefined {
  const metrics = meshSpec?.metrics;
  const backend = metrics?.backends?.find((candidate) => candidate.name === (metrics.enabledBackend ?? ''));
  if (backend?.type !== 'prometheus') return undefined;
  const meshConf = (backend.conf ?? {}) as PrometheusConf;
  const ownConf = (dataplane.metrics?.type === 'prometheus' ? (dataplane.metrics.conf ?? {}) : {}) as PrometheusConf;
  // Mesh defaults (port 5670, the dataplane-metrics service) are normally stored with the mesh.
  const tags = { ...(meshConf.tags ?? { [SERVICE_TAG]: 'dataplane-metrics' }), ...ownConf.tags };
  return { port: ownConf.port || meshConf.port || 5670, tags };
}

const UNSPECIFIED = new Set(['0.0.0.0', '::']);
const overlaps = (a: string, b: string): boolean => UNSPECIFIED.has(a) || UNSPECIFIED.has(b) || a === b;

function usesInboundInterface(inbounds: readonly ProxyInbound[], address: string, port: number): boolean {
  return inbounds.some(({ interface: iface }) =>
    (port === iface.dataplanePort && overlaps(address, iface.dataplaneIp)) || (port === iface.workloadPort && overlaps(address, iface.workloadIp)));
}

/**
 * A transparent proxy's outbounds: the mesh's VIP outbounds it may reach (all, or its
 * `reachableServices`) that do not collide with an inbound, then its own outbounds not at a VIP.
 */
export function effectiveOutbounds(spec: DataplaneSpec, inbounds: readonly ProxyInbound[], vipOutbounds: readonly DataplaneOutbound[] | undefined): readonly DataplaneOutbound[] {
  const own = spec.networking?.outbound ?? [];
  const transparentProxying = spec.networking?.transparentProxying;
  if (!transparentProxying || !vipOutbounds) return own;
  const reachable = new Set(transparentProxying.reachableServices ?? []);
  const vipAddresses = new Set(vipOutbounds.map((outbound) => outbound.address ?? ''));
  const vips = vipOutbounds.filter((outbound) => {
    const service = outboundTags(outbound)?.[SERVICE_TAG] ?? '';
    if (reachable.size > 0 && !reachable.has(service)) return false;
    return !usesInboundInterface(inbounds, outbound.address ?? '', outbound.port ?? 0);
  });
  return [...vips, ...own.filter((outbound) => !vipAddresses.has(outbound.address ?? ''))];
}

export function proxyViewOf(spec: DataplaneSpec, snapshot: Pick<MeshSnapshot, 'meshSpec' | 'vipOutbounds'>): ProxyView {
  const networking = spec.networking;
  const address = networking?.address ?? '';
  const inbounds: ProxyInbound[] = (networking?.inbound ?? []).map((inbound) => {
    const iface = inboundInterface(address, inbound);
    const tags = inbound.tags ?? {};
    return { name: inboundName(iface), service: tags[SERVICE_TAG], tags, interface: iface };
  });
  const metrics = metricsEndpoint(snapshot.meshSpec, spec);
  if (metrics) {
    const iface = inboundInterface(address, { port: metrics.port });
    inbounds.push({ name: inboundName(iface), service: undefined, tags: metrics.tags, interface: iface });
  }
  const outbounds = effectiveOutbounds(spec, inbounds, snapshot.vipOutbounds).map((outbound): ProxyOutbound => {
    const tags = outboundTags(outbound) ?? {};
    return { name: outboundName(outbound.address || '127.0.0.1', outbound.port ?? 0), service: tags[SERVICE_TAG] ?? '', tags };
  });
  return { tagSets: dataplaneTagSets(spec), inbounds, outbounds, isBuiltinGateway: networking?.gateway?.type === 'BUILTIN' };
}

/** The services a proxy is known by: its inbounds' (metrics inbound included) and its gateway's. */
export function ownServicesOf(proxy: ProxyView): Set<string> {
  const services = new Set<string>();
  for (const tags of proxy.tagSets) if (tags[SERVICE_TAG] !== undefined) services.add(tags[SERVICE_TAG]);
  for (const inbound of proxy.inbounds) if (inbound.tags[SERVICE_TAG] !== undefined) services.add(inbound.tags[SERVICE_TAG]);
  return services;
}
