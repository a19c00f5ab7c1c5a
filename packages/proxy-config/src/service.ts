// Keeps every mesh's proxy configuration up to date from the store's change events. Changes are
// collected as they are announced and applied in one batch before the next read; applying one
// only drops the results it can alter, which are computed again when next read. Whoever follows
// a proxy (the xDS server) is told after each batch when its configuration may have changed.
// Which results a change drops is what its kind declares it affects (`affects`, docs/architecture.md).
import { type AnyKind, dataplaneKind, getKind, meshKind, zoneEgressKind, zoneIngressKind } from '@mesh/model';
import type { TargetRefIndex } from '@mesh/policy-matcher';
import type { ResourceKey, ResourceReader, StoredResource } from '@mesh/store';
import {
  type ConfigDump,
  type ConfigDumpOptions,
  type ProxyConfig,
  type ProxyMetadata,
  renderZoneEgressConfig,
  renderZoneEgressConfigDump,
  renderZoneIngressConfig,
  renderZoneIngressConfigDump,
  type ZoneEgressResource,
  type ZoneIngressResource,
  type ZoneProxyMetadata,
} from '@mesh/xds-renderer';
import { MeshProxies, type WorkCounters, type ZoneProxies } from './mesh-proxies.js';
import type { MeshVips } from './vips.js';
import { FOLLOWED_TYPES, type Held, inNameOrder, setHeld, zoneEgressOf, zoneIngressOf } from './resources.js';

export interface ProxyConfigServiceOptions {
  store: ResourceReader;
  /** This control plane's zone: zone ingresses of other zones carry the remote services. */
  localZone?: string | undefined;
  /** A batch of changes that could not be applied. */
  onError?: (error: unknown) => void;
  /**
   * How long configurations rendered ahead (`prepare`) wait for their proxies before those not
   * claimed are dropped; a minute unless given. Proxies reconnect within seconds of a restart.
   */
  unclaimedAfterMs?: number;
}

/** The longest the start's work holds the event loop at a time, in milliseconds. */
const SLICE_MS = 10;

/** A dataplane's configuration rendered ahead; undefined when it fails: its proxy's connection reports why. */
function renderedAhead(mesh: MeshProxies, name: string): ProxyConfig | undefined {
  try {
    return mesh.proxyConfig(name);
  } catch {
    return undefined;
  }
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

const keyText = (key: ResourceKey): string => `${key.type}\u0000${key.mesh}\u0000${key.name}`;

/** A proxy by its resource: a Dataplane (of a mesh), a ZoneIngress or a ZoneEgress (mesh ''). */
export interface ProxyKey {
  readonly type: string;
  readonly mesh: string;
  readonly name: string;
}

/** Called when a followed proxy's configuration may have changed: read it again. */
export type ProxyListener = () => void;

const zoneProxyKey = (type: string, name: string): string => keyText({ type, mesh: '', name });

export class ProxyConfigService {
  /** Matches and renders done so far, all meshes together. */
  readonly counters: WorkCounters = { matched: 0, rendered: 0, targetRefMatched: 0 };
  private readonly store: ResourceReader;
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
  private readonly zoneProxyMetadata = new Map<string, ZoneProxyMetadata>();
  /** Followers of proxies, by proxy key text; and of whole meshes. */
  private readonly proxyListeners = new Map<string, Set<ProxyListener>>();
  private readonly meshListeners = new Map<string, Set<ProxyListener>>();
  /** Zone proxies whose rendered configuration a batch dropped (and dataplanes of deleted meshes), meshes a batch changed anything in. */
  private readonly touchedProxies = new Set<string>();
  private readonly touchedMeshes = new Set<string>();
  private settleScheduled = false;
  /** The first read of the store, while it runs: reads wait for it. */
  private loading: Promise<void> | undefined;
  private stopped = false;
  private readonly unclaimedAfterMs: number;
  private unclaimedTimer: NodeJS.Timeout | undefined;

  constructor(options: ProxyConfigServiceOptions) {
    this.store = options.store;
    this.onError = options.onError ?? (() => {});
    this.unclaimedAfterMs = options.unclaimedAfterMs ?? 60_000;
    this.zoneProxies = {
      localZone: options.localZone,
      // In name order, as a from-scratch read of the store: endpoints of equal address keep that order.
      ingresses: () => inNameOrder(this.zoneIngresses).map(({ value }) => value),
      egresses: () => inNameOrder(this.zoneEgresses).map(({ value }) => value),
    };
  }

  /**
   * Listens to changes, then reads every resource proxy configuration depends on, in slices that
   * leave the event loop to others (the API serves meanwhile): reads wait for it (`settled`).
   */
  async start(): Promise<void> {
    this.unsubscribe = this.store.onChange((change) => {
      if (!FOLLOWED_TYPES.has(change.type)) return;
      this.pending.set(keyText(change), { type: change.type, mesh: change.mesh, name: change.name });
      this.scheduleSettle();
    });
    this.loading = this.load();
    try {
      await this.loading;
    } finally {
      this.loading = undefined;
    }
  }

  /** Stops listening, ends `prepare`, and waits for a batch being applied. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.stopped = true;
    clearTimeout(this.unclaimedTimer);
    await this.loading?.catch(() => {});
    await this.applying;
  }

  /** Resolves once every change announced so far is applied: reads after it see the writes before it. */
  settled(): Promise<void> {
    if (this.loading) return this.loading.then(() => this.settled());
    if (this.pending.size > 0) this.applying = this.applying.then(() => this.applyPending()).catch(this.onError);
    return this.applying;
  }

  /**
   * Matches every dataplane's policies, builds its targetRef rules and renders its configuration
   * ahead of its connection (after a restart, every proxy reconnects at once), in slices that
   * leave the event loop to others; `rendered` is handed each configuration (the data plane
   * server encodes it). A proxy that connects reporting nothing the render depends on is served
   * that configuration; one that reports more (an admin port, a certificate) has its own parts
   * rendered again, its outbounds shared. Changes meanwhile drop what they affect, as ever.
   * The configurations no proxy claimed within `unclaimedAfterMs` are dropped then: dataplanes
   * whose proxies are gone hold no memory for them. Resolves with the number of dataplanes.
   */
  async prepare(rendered?: (config: ProxyConfig) => void): Promise<number> {
    await this.settled();
    let prepared = 0;
    let sliceEnd = performance.now() + SLICE_MS;
    for (const mesh of this.existingMeshes()) {
      mesh.meshContext();
      for (const name of mesh.dataplaneNames()) {
        if (this.stopped) return prepared;
        mesh.match(name);
        mesh.targetRefMatch(name);
        const config = renderedAhead(mesh, name);
        if (config && rendered) rendered(config);
        prepared++;
        if (performance.now() < sliceEnd) continue;
        await yieldToEventLoop();
        await this.settled();
        sliceEnd = performance.now() + SLICE_MS;
      }
    }
    this.unclaimedTimer = setTimeout(() => {
      for (const mesh of this.meshes.values()) mesh.dropUnclaimedConfigs();
    }, this.unclaimedAfterMs);
    this.unclaimedTimer.unref();
    return prepared;
  }

  /**
   * Follows one proxy: `listener` is called after a batch of changes that may alter its rendered
   * configuration (read before), that creates or deletes it, or that changes its metadata. Changes
   * are applied without waiting for a read while anything is followed. Returns the unfollow.
   */
  watchProxy(key: ProxyKey, listener: ProxyListener): () => void {
    return addListener(this.proxyListeners, keyText(key), listener);
  }

  /** Follows every change applied to a mesh (or to zone proxies, which every mesh may route through). */
  watchMesh(mesh: string, listener: ProxyListener): () => void {
    return addListener(this.meshListeners, mesh, listener);
  }

  /** A connected dataplane's node metadata and certificates, rendered into its configuration (undefined forgets them). */
  setDataplaneMetadata(mesh: string, name: string, metadata: ProxyMetadata | undefined): void {
    const proxies = metadata ? this.meshOf(mesh) : this.meshes.get(mesh);
    proxies?.setProxyMetadata(name, metadata);
    this.scheduleNotify();
  }

  /** A mesh's virtual IPs (from the VIP allocator): its transparent proxies are rendered again. */
  setMeshVips(mesh: string, vips: MeshVips): void {
    this.meshOf(mesh).setVips(vips);
    this.touchedMeshes.add(mesh);
    this.scheduleNotify();
  }

  /** A connected zone proxy's admin port and mesh certificates (undefined forgets them). */
  setZoneProxyMetadata(type: string, name: string, metadata: ZoneProxyMetadata | undefined): void {
    const key = zoneProxyKey(type, name);
    if (this.zoneProxyMetadata.get(key) === metadata) return;
    if (metadata) this.zoneProxyMetadata.set(key, metadata);
    else this.zoneProxyMetadata.delete(key);
    if (this.zoneProxyConfigs.delete(key)) this.touchedProxies.add(key);
    this.scheduleNotify();
  }

  /** The rendered configuration of a zone ingress; undefined when there is none. */
  zoneIngressConfig(name: string): ProxyConfig | undefined {
    const ingress = this.zoneIngress(name);
    if (!ingress) return undefined;
    const key = zoneProxyKey(zoneIngressKind.name, name);
    return this.zoneProxyConfig(key, () => renderZoneIngressConfig(ingress, this.meshContexts(), this.zoneProxyMetadata.get(key), this.targetRefPolicyIndexes()));
  }

  /** The rendered configuration of a zone egress; undefined when there is none. */
  zoneEgressConfig(name: string): ProxyConfig | undefined {
    const egress = this.zoneEgress(name);
    if (!egress) return undefined;
    const key = zoneProxyKey(zoneEgressKind.name, name);
    return this.zoneProxyConfig(key, () => renderZoneEgressConfig(egress, this.meshContexts(), this.zoneProxyMetadata.get(key), this.targetRefPolicyIndexes()));
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

  /** The `/xds` document of a zone ingress, from its rendered configuration (or the one given, as sent to it). */
  zoneIngressConfigDump(name: string, options: ConfigDumpOptions = {}, sent?: ProxyConfig): ConfigDump | undefined {
    const ingress = this.zoneIngress(name);
    const config = sent ?? this.zoneIngressConfig(name);
    return ingress && config && renderZoneIngressConfigDump(ingress, config, this.withAdminPort(zoneIngressKind.name, name, options));
  }

  /** The `/xds` document of a zone egress, from its rendered configuration (or the one given, as sent to it). */
  zoneEgressConfigDump(name: string, options: ConfigDumpOptions = {}, sent?: ProxyConfig): ConfigDump | undefined {
    const egress = this.zoneEgress(name);
    const config = sent ?? this.zoneEgressConfig(name);
    return egress && config && renderZoneEgressConfigDump(egress, config, this.withAdminPort(zoneEgressKind.name, name, options));
  }

  private withAdminPort(type: string, name: string, options: ConfigDumpOptions): ConfigDumpOptions {
    const adminPort = this.zoneProxyMetadata.get(zoneProxyKey(type, name))?.adminPort;
    return adminPort === undefined ? options : { adminPort, ...options };
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

  private existingMeshes(): MeshProxies[] {
    return [...this.meshes.values()].filter((mesh) => mesh.exists);
  }

  private meshContexts() {
    return this.existingMeshes().map((mesh) => mesh.meshContext());
  }

  private targetRefPolicyIndexes(): Map<string, TargetRefIndex> {
    return new Map(this.existingMeshes().map((mesh) => [mesh.name, mesh.targetRefPolicyIndex()]));
  }

  /** Meshes first (FOLLOWED_TYPES starts with them); writes made meanwhile are pending and read again. */
  private async load(): Promise<void> {
    let sliceEnd = performance.now() + SLICE_MS;
    for (const type of FOLLOWED_TYPES) {
      const { items } = await this.store.list({ type, offset: 0, size: 0 });
      for (const stored of items) {
        this.apply(stored, stored);
        if (performance.now() < sliceEnd) continue;
        await yieldToEventLoop();
        sliceEnd = performance.now() + SLICE_MS;
      }
    }
  }

  private async applyPending(): Promise<void> {
    while (this.pending.size > 0) {
      const keys = [...this.pending.values()];
      this.pending.clear();
      // Reads of the in-memory store: the batch is applied against one consistent state.
      const resources = await Promise.all(keys.map((key) => this.store.get(key)));
      keys.forEach((key, at) => this.apply(key, resources[at]));
    }
    this.notify();
  }

  /** Applies pending changes soon when anyone follows a proxy, instead of at the next read. */
  private scheduleSettle(): void {
    if (this.settleScheduled || (this.proxyListeners.size === 0 && this.meshListeners.size === 0)) return;
    this.settleScheduled = true;
    setImmediate(() => {
      this.settleScheduled = false;
      void this.settled();
    });
  }

  /** Tells followers about a metadata change outside a batch, once the current batch (if any) is applied. */
  private scheduleNotify(): void {
    void this.applying.then(() => this.notify());
  }

  /** Calls the followers of every proxy and mesh touched since the last call. */
  private notify(): void {
    const calls: ProxyListener[] = [];
    const collect = (listeners: Set<ProxyListener> | undefined) => {
      if (listeners) calls.push(...listeners);
    };
    for (const [meshName, mesh] of this.meshes) {
      const touched = mesh.takeTouched();
      if (touched.size > 0) this.touchedMeshes.add(meshName);
      for (const name of touched) collect(this.proxyListeners.get(keyText({ type: dataplaneKind.name, mesh: meshName, name })));
    }
    for (const key of this.touchedProxies) collect(this.proxyListeners.get(key));
    for (const mesh of this.touchedMeshes) collect(this.meshListeners.get(mesh));
    this.touchedProxies.clear();
    this.touchedMeshes.clear();
    for (const listener of new Set(calls)) {
      try {
        listener();
      } catch (error) {
        this.onError(error);
      }
    }
  }

  /** Applies the stored state of one resource (undefined when it is gone), as its kind declares it affects proxies. */
  private apply(key: ResourceKey, stored: StoredResource | undefined): void {
    const kind = getKind(key.type);
    // Zone proxies read every mesh: any change drops them all.
    for (const zoneProxy of this.zoneProxyConfigs.keys()) this.touchedProxies.add(zoneProxy);
    this.zoneProxyConfigs.clear();
    if (kind.affects === 'zoneProxies') {
      // A zone proxy itself appears or goes away; every mesh may route through zone proxies.
      this.touchedProxies.add(zoneProxyKey(key.type, key.name));
      for (const mesh of this.meshes.keys()) this.touchedMeshes.add(mesh);
      this.setZoneProxy(kind, key.name, stored);
      return;
    }
    if (kind === meshKind) {
      this.touchedMeshes.add(key.name);
      if (stored) this.meshOf(key.name).setMesh(stored);
      // Deleting a mesh deletes everything in it: its proxies' followers learn they are gone.
      else this.forgetMesh(key.name);
      return;
    }
    this.touchedMeshes.add(key.mesh);
    // A resource may be read before its Mesh in a batch: the mesh's state is made on demand.
    const mesh = stored ? this.meshOf(key.mesh) : this.meshes.get(key.mesh);
    mesh?.apply(kind, key.name, stored);
  }

  /** Holds a zone ingress or egress; the meshes routing through that kind of zone proxy drop what they rendered. */
  private setZoneProxy(kind: AnyKind, name: string, stored: StoredResource | undefined): void {
    const ingress = kind === zoneIngressKind;
    const changed = ingress ? setHeld(this.zoneIngresses, name, stored, zoneIngressOf) : setHeld(this.zoneEgresses, name, stored, zoneEgressOf);
    if (changed) for (const mesh of this.meshes.values()) mesh.zoneProxiesChanged(ingress ? 'ingress' : 'egress');
  }

  private forgetMesh(name: string): void {
    const mesh = this.meshes.get(name);
    if (!mesh) return;
    this.meshes.delete(name);
    mesh.forgetDataplanes();
    for (const proxy of mesh.takeTouched()) this.touchedProxies.add(keyText({ type: dataplaneKind.name, mesh: name, name: proxy }));
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

function addListener(listeners: Map<string, Set<ProxyListener>>, key: string, listener: ProxyListener): () => void {
  let set = listeners.get(key);
  if (!set) listeners.set(key, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0 && listeners.get(key) === set) listeners.delete(key);
  };
}
