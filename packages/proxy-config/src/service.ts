// Keeps every mesh's proxy configuration up to date from the store's change events. Changes are
// collected as they are announced and applied in one batch before the next read; applying one
// only drops the results it can alter, which are computed again when next read.
import { dataplaneKind, externalServiceKind, isPolicyKind, meshKind, secretKind, zoneEgressKind, zoneIngressKind } from '@mesh/model';
import type { ResourceKey, ResourceStore, StoredResource } from '@mesh/store';
import {
  type ConfigDump,
  type ProxyConfig,
  renderZoneEgressConfig,
  renderZoneEgressConfigDump,
  renderZoneIngressConfig,
  renderZoneIngressConfigDump,
  type ZoneEgressResource,
  type ZoneIngressResource,
} from '@mesh/xds-renderer';
import { MeshProxies, type WorkCounters, type ZoneProxies } from './mesh-proxies.js';
import { FOLLOWED_TYPES, type Held, setHeld, zoneEgressOf, zoneIngressOf } from './resources.js';

export interface ProxyConfigServiceOptions {
  store: ResourceStore;
  /** This control plane's zone: zone ingresses of other zones carry the remote services. */
  localZone?: string | undefined;
  /** A batch of changes that could not be applied. */
  onError?: (error: unknown) => void;
}

const keyText = (key: ResourceKey): string => `${key.type}\u0000${key.mesh}\u0000${key.name}`;

export class ProxyConfigService {
  /** Matches and renders done so far, all meshes together. */
  readonly counters: WorkCounters = { matched: 0, rendered: 0 };
  private readonly store: ResourceStore;
  private readonly onError: (error: unknown) => void;
  private readonly meshes = new Map<string, MeshProxies>();
  private readonly zoneIngresses = new Map<string, Held<ZoneIngressResource>>();
  private readonly zoneEgresses = new Map<string, Held<ZoneEgressResource>>();
  /** Rendered zone proxies; they read every mesh, so any change drops them all. */
  private readonly zoneProxyConfigs = new Map<string, ProxyConfig>();
  /** Keys announced since the last batch; each is read again from the store when applied. */
  private readonly pending = new Map<string, ResourceKey>();
  private applying: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void) | undefined;
  private readonly zoneProxies: ZoneProxies;

  constructor(options: ProxyConfigServiceOptions) {
    this.store = options.store;
    this.onError = options.onError ?? (() => {});
    this.zoneProxies = {
      localZone: options.localZone,
      ingresses: () => [...this.zoneIngresses.values()].map(({ value }) => value),
      egresses: () => [...this.zoneEgresses.values()].map(({ value }) => value),
    };
  }

  /** Listens to changes, then reads every resource proxy configuration depends on. */
  async start(): Promise<void> {
    this.unsubscribe = this.store.onChange((change) => {
      if (FOLLOWED_TYPES.has(change.type)) this.pending.set(keyText(change), { type: change.type, mesh: change.mesh, name: change.name });
    });
    // Meshes first (FOLLOWED_TYPES starts with them); writes made meanwhile are pending and read again.
    for (const type of FOLLOWED_TYPES) {
      const { items } = await this.store.list({ type, offset: 0, size: 0 });
      for (const stored of items) this.apply(stored, stored);
    }
  }

  /** Stops listening and waits for a batch being applied. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await this.applying;
  }

  /** Resolves once every change announced so far is applied: reads after it see the writes before it. */
  settled(): Promise<void> {
    if (this.pending.size > 0) this.applying = this.applying.then(() => this.applyPending()).catch(this.onError);
    return this.applying;
  }

  /** An existing mesh's proxies. */
  mesh(name: string): MeshProxies | undefined {
    const mesh = this.meshes.get(name);
    return mesh?.exists ? mesh : undefined;
  }

  zoneIngress(name: string): ZoneIngressResource | undefined {
    return this.zoneIngresses.get(name)?.value;
  }

  zoneEgress(name: string): ZoneEgressResource | undefined {
    return this.zoneEgresses.get(name)?.value;
  }

  zoneIngressConfigDump(name: string): ConfigDump | undefined {
    const ingress = this.zoneIngress(name);
    if (!ingress) return undefined;
    const config = this.zoneProxyConfig(`ingress/${name}`, () => renderZoneIngressConfig(ingress, this.meshContexts()));
    return renderZoneIngressConfigDump(ingress, config);
  }

  zoneEgressConfigDump(name: string): ConfigDump | undefined {
    const egress = this.zoneEgress(name);
    if (!egress) return undefined;
    const config = this.zoneProxyConfig(`egress/${name}`, () => renderZoneEgressConfig(egress, this.meshContexts()));
    return renderZoneEgressConfigDump(egress, config);
  }

  private zoneProxyConfig(key: string, render: () => ProxyConfig): ProxyConfig {
    let config = this.zoneProxyConfigs.get(key);
    if (!config) {
      config = render();
      this.zoneProxyConfigs.set(key, config);
      this.counters.rendered++;
    }
    return config;
  }

  private meshContexts() {
    return [...this.meshes.values()].filter((mesh) => mesh.exists).map((mesh) => mesh.meshContext());
  }

  private async applyPending(): Promise<void> {
    while (this.pending.size > 0) {
      const keys = [...this.pending.values()];
      this.pending.clear();
      // Reads of the in-memory store: the batch is applied against one consistent state.
      const resources = await Promise.all(keys.map((key) => this.store.get(key)));
      keys.forEach((key, at) => this.apply(key, resources[at]));
    }
  }

  /** Applies the stored state of one resource; undefined when it is gone. */
  private apply(key: ResourceKey, stored: StoredResource | undefined): void {
    this.zoneProxyConfigs.clear();
    switch (key.type) {
      case meshKind.name:
        if (stored) this.meshOf(key.name).setMesh(stored);
        // Deleting a mesh deletes everything in it.
        else this.meshes.delete(key.name);
        return;
      case zoneIngressKind.name:
        if (setHeld(this.zoneIngresses, key.name, stored, zoneIngressOf)) for (const mesh of this.meshes.values()) mesh.zoneProxiesChanged('ingress');
        return;
      case zoneEgressKind.name:
        if (setHeld(this.zoneEgresses, key.name, stored, zoneEgressOf)) for (const mesh of this.meshes.values()) mesh.zoneProxiesChanged('egress');
        return;
    }
    // A resource may be read before its Mesh in a batch: the mesh's state is made on demand.
    const mesh = stored ? this.meshOf(key.mesh) : this.meshes.get(key.mesh);
    if (!mesh) return;
    if (key.type === dataplaneKind.name) mesh.setDataplane(key.name, stored);
    else if (key.type === externalServiceKind.name) mesh.setExternalService(key.name, stored);
    else if (key.type === secretKind.name) mesh.setSecret(key.name, stored);
    else if (isPolicyKind(key.type)) mesh.setPolicy(key.type, key.name, stored);
  }

  private meshOf(name: string): MeshProxies {
    let mesh = this.meshes.get(name);
    if (!mesh) {
      mesh = new MeshProxies(name, this.zoneProxies, this.counters);
      this.meshes.set(name, mesh);
    }
    return mesh;
  }
}
