// Keeps the virtual IPs of every mesh (docs/xds.md, Service names and virtual IPs) up to date:
// a change of the resources names come from is applied after a short quiet time, mesh by mesh.
// The leader of the instances sharing the store allocates and writes the addresses; the others
// compute the same from what is stored and read the leader's again now and then.
import { dataplaneKind, externalServiceKind, meshKind, SERVICE_TAG, type TagMap, virtualOutboundKind, zoneIngressKind } from '@mesh/model';
import type { DataplaneResource, PolicyOf } from '@mesh/policy-matcher';
import type { ResourceReader, StoredResource } from '@mesh/store';
import { dataplaneOf, externalServiceOf, policyOf, zoneIngressOf } from './resources.js';
import { allocateVips, type MeshVips, meshVipsOf, sameAddresses, type VipAddresses, vipHostsOf, type VipSettings, vipSettingKey } from './vips.js';

/** Where the allocator reports (a pino logger fits). */
export interface VipLog {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface VipAllocatorOptions {
  store: ResourceReader;
  settings: VipSettings;
  /** This control plane's zone: services other zones offer through their zone ingresses get addresses too. */
  localZone?: string | undefined;
  /** Writes a setting through the resource manager, the one writer of the store. */
  putSetting(key: string, value: string): Promise<void>;
  /** Only the leader writes addresses. */
  isLeader(): boolean;
  /** Called with a mesh's outbounds and names whenever they change. */
  onChange(mesh: string, vips: MeshVips): void;
  log: VipLog;
  /** How long changes are collected before they are applied (default 100 ms). */
  debounceMs?: number;
  /** How often every mesh is computed again, for followers to read the leader's addresses (default 10 s). */
  refreshMs?: number;
}

const SOURCE_TYPES: ReadonlySet<string> = new Set([meshKind.name, dataplaneKind.name, externalServiceKind.name, virtualOutboundKind.name, zoneIngressKind.name]);

const parseAddresses = (text: string | undefined): VipAddresses => {
  if (!text) return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as VipAddresses) : {};
  } catch {
    return {};
  }
};

export class VipAllocator {
  private readonly options: VipAllocatorOptions;
  /** Meshes whose sources changed since the last pass; `all` after a zone ingress change or a refresh. */
  private readonly pendingMeshes = new Set<string>();
  private pendingAll = false;
  private timer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void) | undefined;
  private readonly published = new Map<string, string>();
  /**
   * Dataplanes as parsed, by stored object (a change stores a new one): a pass reads every
   * dataplane of the mesh, after a change of one of them and every refresh.
   */
  private readonly dataplanes = new WeakMap<StoredResource, DataplaneResource>();
  private stopped = false;

  constructor(options: VipAllocatorOptions) {
    this.options = options;
  }

  /** Computes every mesh's addresses, then follows changes. */
  async start(): Promise<void> {
    this.unsubscribe = this.options.store.onChange((change) => {
      if (!SOURCE_TYPES.has(change.type)) return;
      if (change.type === zoneIngressKind.name) this.pendingAll = true;
      else this.pendingMeshes.add(change.type === meshKind.name ? change.name : change.mesh);
      this.schedule();
    });
    this.pendingAll = true;
    await this.flush();
    const refreshMs = this.options.refreshMs ?? 10_000;
    this.refreshTimer = setInterval(() => {
      this.pendingAll = true;
      this.schedule();
    }, refreshMs);
    this.refreshTimer.unref();
  }

  /** Stops following changes and waits for a pass under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    clearInterval(this.refreshTimer);
    await this.running;
  }

  /** Applies every change seen so far (the leader just took over: its addresses are written now). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.running.then(() => this.pass());
    return this.running;
  }

  /** Every mesh is computed again at the next pass. */
  recomputeAll(): void {
    this.pendingAll = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => void this.flush(), this.options.debounceMs ?? 100);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    const { store } = this.options;
    const all = this.pendingAll;
    const changed = [...this.pendingMeshes];
    this.pendingAll = false;
    this.pendingMeshes.clear();
    const meshes = (await store.list({ type: meshKind.name, offset: 0, size: 0 })).items.map((mesh) => mesh.name);
    const existing = new Set(meshes);
    for (const mesh of this.published.keys()) if (!existing.has(mesh)) this.published.delete(mesh);
    const wanted = all ? meshes : changed.filter((mesh) => existing.has(mesh));
    if (wanted.length === 0) return;
    const zoneIngresses = (await store.list({ type: zoneIngressKind.name, offset: 0, size: 0 })).items;
    for (const mesh of wanted) {
      try {
        await this.updateMesh(mesh, zoneIngresses);
      } catch (err) {
        this.options.log.error({ err, mesh }, 'virtual IPs could not be allocated');
      }
    }
  }

  private async updateMesh(mesh: string, zoneIngresses: readonly StoredResource[]): Promise<void> {
    const { store, settings, log } = this.options;
    const list = async (type: string) => (await store.list({ type, mesh, offset: 0, size: 0 })).items;
    const [dataplanes, externalServices, virtualOutbounds] = await Promise.all([list(dataplaneKind.name), list(externalServiceKind.name), list(virtualOutboundKind.name)]);
    const hosts = vipHostsOf(
      {
        mesh,
        dataplanes: dataplanes.map((stored) => this.parsedDataplane(stored)),
        externalServices: externalServices.map(externalServiceOf),
        virtualOutbounds: virtualOutbounds.map((stored) => policyOf(stored) as PolicyOf<'VirtualOutbound'>),
        remoteServices: this.remoteServices(mesh, zoneIngresses),
      },
      settings,
    );
    const key = vipSettingKey(mesh);
    const stored = parseAddresses(await store.getSetting(key));
    const { addresses, unallocated } = allocateVips(stored, [...hosts.keys()], settings.cidr);
    if (unallocated.length > 0) {
      log.error({ mesh, cidr: settings.cidr, names: unallocated }, `no free virtual IP left in dnsServer.CIDR ${settings.cidr}: ${unallocated.join(', ')} of mesh ${mesh} get none`);
    }
    if (this.options.isLeader() && !sameAddresses(stored, addresses)) {
      await this.options.putSetting(key, JSON.stringify(addresses));
      log.info({ mesh, vips: Object.keys(addresses).length }, 'mesh virtual IPs changed');
    }
    const vips = meshVipsOf(hosts, addresses);
    const text = JSON.stringify(vips);
    if (this.published.get(mesh) === text || this.stopped) return;
    this.published.set(mesh, text);
    this.options.onChange(mesh, vips);
  }

  private parsedDataplane(stored: StoredResource): DataplaneResource {
    let dataplane = this.dataplanes.get(stored);
    if (!dataplane) this.dataplanes.set(stored, (dataplane = dataplaneOf(stored)));
    return dataplane;
  }

  /** The tags of the mesh's services offered by zone ingresses of other zones. */
  private remoteServices(mesh: string, zoneIngresses: readonly StoredResource[]): TagMap[] {
    const localZone = this.options.localZone ?? '';
    return zoneIngresses.flatMap((stored) => {
      const ingress = zoneIngressOf(stored);
      const zone = ingress.spec.zone ?? '';
      if (zone === '' || zone === localZone) return [];
      return (ingress.spec.availableServices ?? []).filter((service) => service.mesh === mesh && service.tags?.[SERVICE_TAG] !== undefined).map((service) => service.tags ?? {});
    });
  }
}
