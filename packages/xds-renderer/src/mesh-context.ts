// What every proxy of a mesh shares (docs/xds.md, What a proxy receives), computed once per mesh state: the endpoints
// of each service, the policy index, the mesh's backends, and the ClusterLoadAssignments built
// so far (one per cluster, handed to every proxy that needs it).
import {
  type ExternalServiceSpec,
  type MeshSpec,
  SERVICE_TAG,
  type TagMap,
  type ZoneEgressSpec,
  type ZoneIngressSpec,
} from '@mesh/model';
import { indexPolicies, type DataplaneResource, type ExternalServiceResource, type MeshSnapshot, type PolicyIndex, type VipDomains } from '@mesh/policy-matcher';
import { type ClusterLoadAssignment, type JsonObject, TYPE, socketAddress } from './envoy.js';
import { EXTERNAL_SERVICE_TAG, tagsWithout } from './names.js';

export interface ZoneProxyResource<Spec> {
  readonly name: string;
  readonly spec: Spec;
}
export type ZoneIngressResource = ZoneProxyResource<ZoneIngressSpec>;
export type ZoneEgressResource = ZoneProxyResource<ZoneEgressSpec>;

/** The state of one mesh a control plane renders proxies from. */
export interface MeshState {
  /** Mesh name and spec, policies, external services and VIP outbounds: what matching reads too. */
  readonly snapshot: MeshSnapshot;
  /** Every dataplane of the mesh. */
  readonly dataplanes: readonly DataplaneResource[];
  /** Zone ingresses of every zone: remote ones carry the other zones' services (mTLS meshes only). */
  readonly zoneIngresses?: readonly ZoneIngressResource[];
  /** The zone egresses of this zone: with `routing.zoneEgress`, external and remote traffic goes through them. */
  readonly zoneEgresses?: readonly ZoneEgressResource[];
  /** This control plane's zone; unset on a standalone control plane. */
  readonly localZone?: string;
  /** PERMISSIVE mTLS only: services whose every instance holds a certificate of the enabled CA. */
  readonly tlsReadyServices?: Iterable<string>;
  /** Base64 data of the mesh's Secrets by name, for the TLS data sources of external services. */
  readonly secrets?: ReadonlyMap<string, string>;
  /** The DNS names of the mesh's virtual IPs, which transparent proxies' DNS listeners answer. */
  readonly vipDomains?: readonly VipDomains[];
}

/** How an external service's endpoint is reached: its TLS settings, data sources as Envoy DataSources. */
export interface ExternalServiceTls {
  readonly enabled: boolean;
  readonly caCert?: JsonObject | undefined;
  readonly clientCert?: JsonObject | undefined;
  readonly clientKey?: JsonObject | undefined;
  readonly allowRenegotiation: boolean;
  readonly skipHostnameVerification: boolean;
  readonly serverName: string;
}

export interface Endpoint {
  /** IP address or, for external services, a host name. */
  readonly address: string;
  readonly port: number;
  readonly tags: TagMap;
  readonly weight: number;
  /** Set on endpoints of external services (reached directly or through a zone egress). */
  readonly externalService?: ExternalServiceTls;
}

export interface MtlsBackend {
  readonly name: string;
  readonly mode: 'STRICT' | 'PERMISSIVE';
}

export interface LoggingBackend {
  readonly name: string;
  readonly type: string;
  readonly format?: string | undefined;
  readonly conf?: Record<string, unknown> | undefined;
}

export interface TracingBackend {
  readonly name: string;
  readonly type: string;
  readonly sampling?: number | undefined;
  readonly conf?: Record<string, unknown> | undefined;
}

const NO_TLS: ExternalServiceTls = { enabled: false, allowRenegotiation: false, skipHostnameVerification: false, serverName: '' };

/** `host:port` (IPv6 in brackets) split; undefined when there is no port. */
export function splitHostPort(address: string): { host: string; port: number } | undefined {
  const colon = address.lastIndexOf(':');
  if (colon < 0) return undefined;
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const port = Number(address.slice(colon + 1));
  return Number.isInteger(port) ? { host, port } : undefined;
}

type DataSource = NonNullable<NonNullable<NonNullable<ExternalServiceSpec['networking']>['tls']>['caCert']>;

/** A data source as Envoy reads it; undefined when it names a secret the mesh does not have. */
function envoyDataSource(source: DataSource, secrets: ReadonlyMap<string, string>): JsonObject | undefined {
  if (source.inline !== undefined) return { inlineBytes: source.inline };
  if (source.inlineString !== undefined) return { inlineBytes: Buffer.from(source.inlineString).toString('base64') };
  if (source.secret !== undefined) {
    const data = secrets.get(source.secret);
    return data === undefined ? undefined : { inlineBytes: data };
  }
  // The reference reads files on the control plane; a pure renderer lets the proxy read it.
  if (source.file !== undefined) return { filename: source.file };
  return undefined;
}

const objectIds = new WeakMap<object, number>();
let lastObjectId = 0;

/**
 * A number standing for an object (0 for none) in the keys of shared resources: policies and
 * their confs are the same objects for as long as they do not change.
 */
export function objectId(value: object | undefined): number {
  if (value === undefined) return 0;
  let id = objectIds.get(value);
  if (id === undefined) objectIds.set(value, (id = ++lastObjectId));
  return id;
}

export type AvailableService = NonNullable<ZoneIngressSpec['availableServices']>[number];

/** A zone ingress of another zone, at its advertised address, with the services of one mesh it offers. */
export interface RemoteIngress {
  readonly address: string;
  readonly port: number;
  readonly services: readonly AvailableService[];
}

export class MeshContext {
  readonly name: string;
  readonly spec: MeshSpec;
  readonly policies: PolicyIndex;
  readonly mtls: MtlsBackend | undefined;
  readonly zoneEgressEnabled: boolean;
  readonly tlsReadyServices: ReadonlySet<string>;
  /** Endpoints by service: dataplane inbounds, remote zone ingresses and (through egress) external services. */
  readonly endpointsByService: ReadonlyMap<string, readonly Endpoint[]>;
  readonly state: MeshState;
  private readonly externalEndpoints = new Map<ExternalServiceResource, Endpoint | undefined>();
  private readonly loadAssignments = new Map<string, ClusterLoadAssignment>();
  private readonly sharedResources = new Map<string, object>();
  private remoteIngressList: readonly RemoteIngress[] | undefined;

  constructor(state: MeshState) {
    const { snapshot } = state;
    this.state = state;
    this.name = snapshot.mesh;
    this.spec = snapshot.meshSpec ?? { skipCreatingInitialPolicies: undefined };
    this.policies = indexPolicies(snapshot);
    const mtls = this.spec.mtls;
    const backend = mtls?.enabledBackend ? mtls.backends?.find((candidate) => candidate.name === mtls.enabledBackend) : undefined;
    this.mtls = backend ? { name: backend.name ?? '', mode: backend.mode ?? 'STRICT' } : undefined;
    this.zoneEgressEnabled = this.spec.routing?.zoneEgress === true;
    this.tlsReadyServices = new Set(state.tlsReadyServices ?? []);
    this.endpointsByService = this.buildEndpointMap();
  }

  /** Whether outbound traffic that matches no outbound leaves the mesh (default true). */
  get passthrough(): boolean {
    return this.spec.networking?.outbound?.passthrough !== false;
  }

  /** The named logging backend, or the default one when no name is given. */
  loggingBackend(name: string | undefined): LoggingBackend | undefined {
    const logging = this.spec.logging;
    const wanted = name || logging?.defaultBackend || '';
    const backend = logging?.backends?.find((candidate) => (candidate.name ?? '') === wanted);
    return backend ? { ...backend, name: backend.name ?? '', type: backend.type ?? '' } : undefined;
  }

  /** The named tracing backend, or the default one when no name is given. */
  tracingBackend(name: string | undefined): TracingBackend | undefined {
    const tracing = this.spec.tracing;
    const wanted = name || tracing?.defaultBackend || '';
    const backend = tracing?.backends?.find((candidate) => (candidate.name ?? '') === wanted);
    return backend ? { ...backend, name: backend.name ?? '', type: backend.type ?? '' } : undefined;
  }

  /** The endpoint of an external service reached directly; undefined when its address or TLS sources cannot be read. */
  externalServiceEndpoint(externalService: ExternalServiceResource): Endpoint | undefined {
    if (this.externalEndpoints.has(externalService)) return this.externalEndpoints.get(externalService);
    const endpoint = this.buildExternalServiceEndpoint(externalService);
    this.externalEndpoints.set(externalService, endpoint);
    return endpoint;
  }

  /**
   * A resource that every proxy rendering it from the same inputs gets equal (an outbound cluster
   * for the consumers of a service, an outbound listener for the instances of one): built once per
   * mesh state, `key` naming every input beyond the mesh state. Shared, so read-only: the xDS
   * server encodes it once (docs/xds.md, Versions and nonces).
   */
  shared<T extends object>(key: string, build: () => T): T {
    let resource = this.sharedResources.get(key);
    if (resource === undefined) {
      resource = build();
      this.sharedResources.set(key, resource);
    }
    return resource as T;
  }

  /**
   * The ClusterLoadAssignment of a cluster: the endpoints of its service carrying its other
   * tags. Built once per mesh state and shared by every proxy: read-only.
   */
  loadAssignment(clusterName: string, clusterTags: TagMap): ClusterLoadAssignment {
    let assignment = this.loadAssignments.get(clusterName);
    if (assignment === undefined) {
      const service = clusterTags[SERVICE_TAG] ?? '';
      const required = Object.entries(tagsWithout(clusterTags, SERVICE_TAG));
      const endpoints = (this.endpointsByService.get(service) ?? []).filter((endpoint) =>
        required.every(([key, value]) => endpoint.tags[key] === value),
      );
      assignment = buildLoadAssignment(clusterName, endpoints);
      this.loadAssignments.set(clusterName, assignment);
    }
    return assignment;
  }

  private buildEndpointMap(): Map<string, Endpoint[]> {
    const endpoints = new Map<string, Endpoint[]>();
    const add = (service: string, endpoint: Endpoint): void => {
      const list = endpoints.get(service);
      if (list) list.push(endpoint);
      else endpoints.set(service, [endpoint]);
    };
    const ingressInstances = this.addRemoteIngressEndpoints(add);
    // Remote services are weighted by their instance count: local ones weigh as much as one ingress.
    const localWeight = ingressInstances > 0 ? ingressInstances : 1;
    for (const dataplane of this.state.dataplanes) {
      const networking = dataplane.spec.networking;
      for (const inbound of networking?.inbound ?? []) {
        // A health block without `ready: true` marks the inbound not ready.
        if (inbound.health !== undefined && inbound.health.ready !== true) continue;
        const tags = inbound.tags ?? {};
        const address = networking?.advertisedAddress || inbound.address || networking?.address || '';
        add(tags[SERVICE_TAG] ?? '', { address, port: inbound.port ?? 0, tags, weight: localWeight });
      }
    }
    if (this.zoneEgressEnabled) {
      for (const externalService of this.state.snapshot.externalServices ?? []) {
        const tags = externalService.spec.tags ?? {};
        for (const egress of this.state.zoneEgresses ?? []) {
          const { address = '', port = 0 } = egress.spec.networking ?? {};
          add(tags[SERVICE_TAG] ?? '', { address, port, tags, weight: 1, externalService: NO_TLS });
        }
      }
    }
    return endpoints;
  }

  /**
   * The zone ingresses of other zones, one per advertised address (instances behind one load
   * balancer share it), each with its available services of this mesh; only those offering any
   * service. Ingresses route by SNI, which needs mTLS: none without it.
   */
  remoteIngresses(): readonly RemoteIngress[] {
    if (this.remoteIngressList) return this.remoteIngressList;
    const list: RemoteIngress[] = [];
    const seen = new Set<string>();
    if (this.mtls) {
      for (const ingress of this.state.zoneIngresses ?? []) {
        const zone = ingress.spec.zone ?? '';
        if (zone === '' || zone === (this.state.localZone ?? '')) continue;
        const { advertisedAddress = '', advertisedPort = 0 } = ingress.spec.networking ?? {};
        if (advertisedAddress === '' || advertisedPort === 0) continue;
        const coordinates = `${advertisedAddress}:${advertisedPort}`;
        const services = ingress.spec.availableServices ?? [];
        if (seen.has(coordinates) || services.length === 0) continue;
        seen.add(coordinates);
        list.push({ address: advertisedAddress, port: advertisedPort, services: services.filter((available) => (available.mesh ?? '') === this.name) });
      }
    }
    this.remoteIngressList = list;
    return list;
  }

  /** Services of other zones, reached at their zone ingress (or through this zone's egresses); returns the ingress count. */
  private addRemoteIngressEndpoints(add: (service: string, endpoint: Endpoint) => void): number {
    const ingresses = this.remoteIngresses();
    for (const ingress of ingresses) {
      for (const available of ingress.services) {
        const tags = available.tags ?? {};
        const service = tags[SERVICE_TAG] ?? '';
        if (this.zoneEgressEnabled) {
          for (const egress of this.state.zoneEgresses ?? []) {
            const { address = '', port = 0 } = egress.spec.networking ?? {};
            add(service, { address, port, tags, weight: 1, ...(available.externalService ? { externalService: NO_TLS } : {}) });
          }
        } else {
          add(service, { address: ingress.address, port: ingress.port, tags, weight: available.instances ?? 0 });
        }
      }
    }
    return ingresses.length;
  }

  private buildExternalServiceEndpoint(externalService: ExternalServiceResource): Endpoint | undefined {
    const spec = externalService.spec;
    const target = splitHostPort(spec.networking?.address ?? '');
    if (!target) return undefined;
    const tls = spec.networking?.tls;
    const secrets = this.state.secrets ?? new Map<string, string>();
    const sources: Partial<Record<'caCert' | 'clientCert' | 'clientKey', JsonObject>> = {};
    for (const key of ['caCert', 'clientCert', 'clientKey'] as const) {
      const source = tls?.[key];
      if (source === undefined) continue;
      const converted = envoyDataSource(source, secrets);
      // As the reference: an external service whose TLS material is missing gets no endpoint.
      if (converted === undefined) return undefined;
      sources[key] = converted;
    }
    const enabled = tls?.enabled === true;
    const tags = enabled ? { ...spec.tags, [EXTERNAL_SERVICE_TAG]: externalService.name } : (spec.tags ?? {});
    return {
      address: target.host,
      port: target.port,
      tags,
      weight: 1,
      externalService: {
        enabled,
        ...sources,
        allowRenegotiation: tls?.allowRenegotiation === true,
        skipHostnameVerification: tls?.skipHostnameVerification === true,
        serverName: tls?.serverName ?? '',
      },
    };
  }
}

/** Prepares a mesh for rendering its proxies: do it once per mesh state, then render each proxy. */
export const prepareMeshContext = (state: MeshState): MeshContext => new MeshContext(state);

const byAddressThenPort = (a: Endpoint, b: Endpoint): number => (a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port);

/** Endpoint metadata: the tags but the service, for subset load balancing and transport socket matches. */
function endpointMetadata(tags: TagMap): JsonObject | undefined {
  const fields = tagsWithout(tags, SERVICE_TAG);
  if (Object.keys(fields).length === 0) return undefined;
  return { filterMetadata: { 'envoy.lb': fields, 'envoy.transport_socket_match': fields } };
}

/** A ClusterLoadAssignment resource: endpoints in address order; no endpoints leave only the cluster name. */
export const buildLoadAssignment = (clusterName: string, endpoints: readonly Endpoint[]): ClusterLoadAssignment => ({
  '@type': TYPE.clusterLoadAssignment,
  ...inlineLoadAssignment(clusterName, endpoints),
});

/** The same without `@type`, as a cluster carries it inline. */
export function inlineLoadAssignment(clusterName: string, endpoints: readonly Endpoint[]): JsonObject & { clusterName: string } {
  const assignment: JsonObject & { clusterName: string } = { clusterName };
  if (endpoints.length === 0) return assignment;
  const lbEndpoints = [...endpoints].sort(byAddressThenPort).map((endpoint): JsonObject => {
    const lbEndpoint: JsonObject = { endpoint: { address: socketAddress(endpoint.address, endpoint.port) } };
    if (endpoint.weight > 0) lbEndpoint.loadBalancingWeight = endpoint.weight;
    const metadata = endpointMetadata(endpoint.tags);
    if (metadata) lbEndpoint.metadata = metadata;
    return lbEndpoint;
  });
  assignment.endpoints = [{ lbEndpoints }];
  return assignment;
}
