// A proxy's resources while they are generated, each with the generator it came from (its
// origin): the targetRef policies find the listeners and clusters they configure by origin, and
// MeshProxyPatch matches on it (docs/policies.md, What each policy does to the proxy).
import type { Cluster, ClusterLoadAssignment, Listener, Secret, TypedObject } from './envoy.js';

/** The generator a resource came from, named as the reference names it. */
export const ORIGIN = {
  admin: 'admin',
  prometheus: 'prometheus',
  transparent: 'transparent',
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

/** Resources of one xDS type by name: adding a name again replaces the earlier resource. */
export class ResourcesOfType<T> {
  private readonly byName = new Map<string, Entry<T>>();

  add(origin: string, name: string, resource: T): void {
    this.byName.set(name, { name, origin, resource });
  }

  get(name: string): Entry<T> | undefined {
    return this.byName.get(name);
  }

  remove(name: string): void {
    this.byName.delete(name);
  }

  entries(): Entry<T>[] {
    return [...this.byName.values()];
  }

  ofOrigin(origin: string): Entry<T>[] {
    return this.entries().filter((entry) => entry.origin === origin);
  }

  /** The resources in name order. */
  sorted(): T[] {
    return [...this.byName.keys()].sort().map((name) => (this.byName.get(name) as Entry<T>).resource);
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
