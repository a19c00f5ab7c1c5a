// The backends of MeshHTTPRoute and MeshTCPRoute rules (docs/policies.md): each backend a cluster
// (one per distinct backend, shared by the outbounds of the proxy), with the weights of the split,
// then the clusters and endpoints of every service reached, as the outbound side renders them
// before any policy configures them.
import { type BackendRef, SERVICE_TAG, type TagMap } from '@mesh/model';
import { type JsonObject, type Listener, socketAddress, TYPE } from '../envoy.js';
import { destinationClusterName, MESH_TAG, outboundListenerName, sortedTagKeys, tagsWithout } from '../names.js';
import { type ClusterTarget, renderServiceCluster, serviceLoadAssignment } from '../outbound.js';
import type { Protocol } from '../protocol.js';
import { isExternalService } from '../proxy-state.js';
import { ORIGIN } from '../resource-set.js';
import { type OutboundSite, type PluginInput, serviceProtocol } from './common.js';

export interface Split {
  readonly clusterName: string;
  readonly weight: number;
  readonly external: boolean;
}

interface RouteCluster extends ClusterTarget {
  readonly external: boolean;
}

/** A backend's identity: its kind, service, tags and mesh. */
const backendKey = (ref: BackendRef): string =>
  `${ref.kind ?? ''}/${ref.name ?? ''}/${sortedTagKeys(ref.tags ?? {})
    .map((key) => `${key}=${ref.tags?.[key] ?? ''}`)
    .join('/')}/${ref.mesh ?? ''}`;

/** The clusters the route rules of one kind send traffic to, for one proxy. */
export class RouteBackends {
  private readonly clusterNames = new Map<string, string>();
  private readonly services = new Map<string, RouteCluster[]>();

  constructor(private readonly input: PluginInput) {}

  /**
   * The split of some backends (services and their subsets; weight 1 unless given, weight 0 left
   * out). Undefined when a backend's service speaks none of the protocols, or no backend is left.
   */
  split(refs: readonly BackendRef[], protocols: ReadonlySet<Protocol>): Split[] | undefined {
    const split: Split[] = [];
    for (const ref of refs) {
      if (ref.kind !== 'MeshService' && ref.kind !== 'MeshServiceSubset') continue;
      const weight = ref.weight ?? 1;
      if (weight === 0) continue;
      const service = ref.name ?? '';
      if (!protocols.has(serviceProtocol(this.input.state, service))) return undefined;
      const external = isExternalService(this.input.state, service);
      const key = backendKey(ref);
      let clusterName = this.clusterNames.get(key);
      if (clusterName === undefined) {
        const tags: TagMap = { ...ref.tags, [SERVICE_TAG]: service };
        clusterName = destinationClusterName(tags);
        this.clusterNames.set(key, clusterName);
        const clusters = this.services.get(service) ?? [];
        clusters.push({ name: clusterName, service, tags: tagsWithout(tags, MESH_TAG), otherMesh: tags[MESH_TAG], external });
        this.services.set(service, clusters);
      }
      split.push({ clusterName, weight, external });
    }
    return split.length > 0 ? split : undefined;
  }

  /** The cluster of a backend a split already made (a mirror's). */
  clusterOf(ref: BackendRef): string | undefined {
    return this.clusterNames.get(backendKey(ref));
  }

  /** Adds the clusters of every service reached, and their endpoints sent over EDS. */
  addResources(): void {
    const { state, resources } = this.input;
    for (const service of [...this.services.keys()].sort()) {
      const clusters = this.services.get(service) ?? [];
      const external = clusters.some((cluster) => cluster.external);
      const protocol = serviceProtocol(state, service);
      for (const cluster of clusters) {
        resources.addCluster(ORIGIN.outbound, renderServiceCluster(state, cluster, external, protocol));
        // External services reached directly have their endpoints inline.
        if (!external || state.context.zoneEgressEnabled) resources.addEndpoints(ORIGIN.outbound, serviceLoadAssignment(state, cluster));
      }
    }
  }
}

/** An outbound's listener around one filter chain, as the outbound side names and tags it. */
export function outboundListener(input: PluginInput, site: OutboundSite, chain: JsonObject): Listener {
  const listener: Listener = {
    '@type': TYPE.listener,
    name: outboundListenerName(site.host, site.port),
    address: socketAddress(site.host, site.port),
    trafficDirection: 'OUTBOUND',
    filterChains: [chain],
    metadata: { filterMetadata: { 'io.mesh.tags': tagsWithout(site.outbound.tags, MESH_TAG) } },
  };
  if (input.state.transparentProxying) listener.bindToPort = false;
  return listener;
}
