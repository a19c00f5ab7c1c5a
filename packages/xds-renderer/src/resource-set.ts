// A proxy's resources while they are generated, each with the generator it came from (its
// origin): the targetRef policies find the listeners and clusters they configure by origin, and
// MeshProxyPatch matches on it (docs/policies.md, What each policy does to the proxy).
import type { Cluster, ClusterLoadAssignment, Listener, Secret, TypedObject } from './envoy.js';

/** The generator a resource came from, named as the reference names it. */
export const ORIGIN = {
  admin: 'admin',
  prometheus: 'prometheus',
  transparent: 'transparent',
  dns: 'dns',
  tracing: 'tracing',
  inbound: 'inbound',
  outbound: 'outbound',
  gateway: 'gateway',
  meshAccessLog: 'meshaccesslog',
  meshTrace: 'mesh-trace',
  meshProxyPatch: 'mesh-proxy-patch',
  secrets: 'secrets',
  proxyTemplateRaw: 'proxy-template-raw',
  proxyTemplateModifications: 'proxy-template-modifications',
} as const;

export interface Entry<T> {
  readonly name: string;
  readonly origin: string;
  resource: T;
}

/** Above this many resources a type is sorted by `Array.prototype.sort`; below, in place as it is read. */
const INSERTION_SORT_MAX = 32;

/** Resources of one xDS type by name: adding a name again replaces the earlier resource. */
export class ResourcesOfType<T> {
  /** Made on the first add: a proxy has no resources of most types (routes, secrets), and every render makes a set. */
  private byName: Map<string, Entry<T>> | undefined;

  add(origin: string, name: string, resource: T): void {
    (this.byName ??= new Map()).set(name, { name, origin, resource });
  }

  get(name: string): Entry<T> | undefined {
    return this.byName?.get(name);
  }

  remove(name: string): void {
    this.byName?.delete(name);
  }

  entries(): Entry<T>[] {
    return this.byName ? [...this.byName.values()] : [];
  }

  ofOrigin(origin: string): Entry<T>[] {
    return this.entries().filter((entry) => entry.origin === origin);
  }

  /** The resources in name order (code-unit order). */
  sorted(): T[] {
    const byName = this.byName;
    if (!byName) return [];
    if (byName.size > INSERTION_SORT_MAX) return [...byName.keys()].sort().map((name) => (byName.get(name) as Entry<T>).resource);
    // Every proxy's render sorts its few resources of each type: without the engine's sort, which allocates per call.
    const entries: Entry<T>[] = [];
    for (const entry of byName.values()) {
      let at = entries.length;
      while (at > 0 && (entries[at - 1] as Entry<T>).name > entry.name) {
        entries[at] = entries[at - 1] as Entry<T>;
        at--;
      }
      entries[at] = entry;
    }
    const resources: T[] = new Array<T>(entries.length);
    for (let at = 0; at < entries.length; at++) resources[at] = (entries[at] as Entry<T>).resource;
    return resources;
  }
}

export class ResourceSet {
  readonly listeners = new ResourcesOfType<Listener>();
  readonly clusters = new ResourcesOfType<Cluster>();
  /** Shared between the proxies of a mesh context until a policy replaces one: never edit one in place. */
  readonly endpoints = new ResourcesOfType<ClusterLoadAssignment>();
  /** Sent over RDS: a builtin gateway's and a ProxyTemplate's raw ones; sidecars' travel inline in their listeners. */
  readonly routes = new ResourcesOfType<TypedObject>();
  readonly secrets = new ResourcesOfType<Secret>();

  addListener(origin: string, listener: Listener): void {
    this.listeners.add(origin, listener.name, listener);
  }

  addCluster(origin: string, cluster: Cluster): void {
    this.clusters.add(origin, cluster.name, cluster);
  }

  addEndpoints(origin: string, assignment: ClusterLoadAssignment): void {
    this.endpoints.add(origin, assignment.clusterName, assignment);
  }
}
