// One sidecar being rendered: its dataplane, the policies matched for it, what its agent told the
// control plane (node metadata) and what the generators derive from them.
import { type DataplaneSpec, SERVICE_TAG, type TagMap, dataplaneTagSets } from '@mesh/model';
import { type DataplaneResource, type MatchedPolicies, sameJson } from '@mesh/policy-matcher';
import type { Cluster, Listener } from './envoy.js';
import type { Endpoint, MeshContext, TracingBackend } from './mesh-context.js';
import { serializeTagsHeader } from './names.js';
import { commonProtocolOf, type Protocol } from './protocol.js';
import type { CertificatePair, MeshIdentity } from './tls.js';

/** What the proxy's agent reports in its node metadata, and certificates the control plane issued. */
export interface ProxyMetadata {
  /** Envoy's admin port (`dataplane.admin.port`); default `networking.admin.port`, else 9901. */
  readonly adminPort?: number;
  /** Envoy's admin address (`dataplane.admin.address`): loopback or any only. */
  readonly adminAddress?: string;
  /** The agent's socket for TCP access logs (`accessLogSocketPath`). */
  readonly accessLogSocketPath?: string;
  /** The agent's socket serving merged metrics (`metricsSocketPath`). */
  readonly metricsSocketPath?: string;
  /** Certificate and key the agent serves metrics with (`metricsCertPath`, `metricsKeyPath`). */
  readonly metricsCertPath?: string;
  readonly metricsKeyPath?: string;
  /** The port of the DNS listener on loopback (`dataplane.dns.port`): set when the agent enables DNS. */
  readonly dnsPort?: number;
  /** The admin listener's TLS chain (for the control plane's `/xds` calls); without it only `/ready` is exposed. */
  readonly adminTls?: { readonly server: CertificatePair; readonly caPem: string };
  /** The proxy's mesh certificate: with it the Secrets mesh mTLS refers to are rendered too. */
  readonly identity?: MeshIdentity;
}

const DEFAULT_ADMIN_PORT = 9901;

export interface ProxyState {
  readonly context: MeshContext;
  readonly dataplane: DataplaneResource;
  readonly spec: DataplaneSpec;
  readonly policies: MatchedPolicies;
  readonly metadata: ProxyMetadata;
  readonly adminPort: number;
  /** The address other proxies reach this one at. */
  readonly address: string;
  readonly ipv6: boolean;
  /** The first of its services in name order, `unknown` without one (traces and logs name it). */
  readonly identifyingService: string;
  readonly tagSets: readonly TagMap[];
  /** The tag sets as the header that tells upstreams who calls (`x-mesh-tags`), written once per proxy rather than per outbound and route. */
  readonly tagsHeader: string;
  /** Traffic reaches the proxy through redirection (both redirect ports set): listeners do not bind. */
  readonly transparentProxying: boolean;
  readonly tracingBackend: TracingBackend | undefined;
  readonly accessLogSocketPath: string;
  /** Endpoints of the external services this proxy may reach directly (without zone egress), by service. */
  readonly externalEndpoints: ReadonlyMap<string, readonly Endpoint[]>;
  /**
   * Listeners and clusters equal between proxies come from the mesh context, built once per mesh
   * state (`MeshContext.shared`): only when nothing edits them afterwards (no targetRef policy).
   */
  readonly shareResources: boolean;
}

const NO_EXTERNAL_ENDPOINTS: ReadonlyMap<string, readonly Endpoint[]> = new Map();

/** Endpoints of the external services a permission opens to the proxy, when they are reached directly. */
function externalEndpointsOf(context: MeshContext, policies: MatchedPolicies): ReadonlyMap<string, readonly Endpoint[]> {
  if (context.zoneEgressEnabled || policies.externalServices.length === 0) return NO_EXTERNAL_ENDPOINTS;
  const endpoints = new Map<string, Endpoint[]>();
  for (const { externalService } of policies.externalServices) {
    const endpoint = context.externalServiceEndpoint(externalService);
    if (!endpoint) continue;
    const service = externalService.spec.tags?.[SERVICE_TAG] ?? '';
    const list = endpoints.get(service);
    if (list) list.push(endpoint);
    else endpoints.set(service, [endpoint]);
  }
  return endpoints;
}

/** The protocol every endpoint of the services speaks, external ones included. */
export function protocolOfServices(state: ProxyState, services: Iterable<string>): Protocol {
  const endpoints: Endpoint[] = [];
  for (const service of services) {
    endpoints.push(...(state.context.endpointsByService.get(service) ?? []), ...(state.externalEndpoints.get(service) ?? []));
  }
  return commonProtocolOf(endpoints);
}

/** Whether a service is an external service (reached directly or through a zone egress). */
export const isExternalService = (state: ProxyState, service: string): boolean =>
  state.context.endpointsByService.get(service)?.[0]?.externalService !== undefined || state.externalEndpoints.has(service);

export function proxyStateOf(context: MeshContext, dataplane: DataplaneResource, policies: MatchedPolicies, metadata: ProxyMetadata, shareResources: boolean): ProxyState {
  const spec = dataplane.spec;
  const networking = spec.networking;
  const tagSets = dataplaneTagSets(spec);
  const services = tagSets.map((tags) => tags[SERVICE_TAG]).filter((service): service is string => service !== undefined).sort();
  const address = networking?.advertisedAddress || networking?.address || '';
  const trace = policies.trafficTrace;
  return {
    context,
    dataplane,
    spec,
    policies,
    metadata,
    adminPort: metadata.adminPort ?? networking?.admin?.port ?? DEFAULT_ADMIN_PORT,
    address,
    ipv6: (networking?.address ?? '').includes(':'),
    identifyingService: services[0] ?? 'unknown',
    tagSets,
    tagsHeader: serializeTagsHeader(tagSets),
    transparentProxying: Boolean(networking?.transparentProxying?.redirectPortInbound && networking.transparentProxying.redirectPortOutbound),
    tracingBackend: trace ? context.tracingBackend(trace.spec.conf?.backend) : undefined,
    accessLogSocketPath: metadata.accessLogSocketPath ?? `/tmp/mesh-al-${dataplane.name}-${dataplane.mesh}.sock`,
    externalEndpoints: externalEndpointsOf(context, policies),
    shareResources,
  };
}

/** A resource built for one proxy, with the inputs it was built from. */
interface OwnResource {
  readonly inputs: readonly unknown[];
  readonly resource: Listener | Cluster;
}

/** Per stored dataplane (a new object once it changes), the resources only it has, from its last render, with their inputs. */
const ownResources = new WeakMap<DataplaneResource, Map<string, OwnResource>>();

/** Forgets a dataplane's own resources from its last render: no proxy is served them any more. */
export function forgetOwnResources(dataplane: DataplaneResource): void {
  ownResources.delete(dataplane);
}

/**
 * A resource of this proxy alone (its admin listener, an inbound listener), taken from its last
 * render when `inputs` are equal to the ones it was built from (as JSON values, element by
 * element: no text is written out for the comparison): a change elsewhere in the mesh leaves it
 * the same object, which the xDS server then need not encode again (docs/xds.md, Versions and
 * nonces). The inputs outlive the mesh state, so they name everything the resource is made of, the
 * mesh's own settings included. Only when resources are shared: nothing edits them after rendering.
 */
export function ownResource<T extends Listener | Cluster>(state: ProxyState, slot: string, inputs: readonly unknown[], build: () => T): T {
  if (!state.shareResources) return build();
  let slots = ownResources.get(state.dataplane);
  if (!slots) ownResources.set(state.dataplane, (slots = new Map<string, OwnResource>()));
  const held = slots.get(slot);
  if (held && sameJson(held.inputs, inputs)) return held.resource as T;
  const resource = build();
  slots.set(slot, { inputs, resource });
  return resource;
}
