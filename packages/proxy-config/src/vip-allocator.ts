// Keeps the virtual IPs of every mesh (docs/xds.md, Service names and virtual IPs) up to date:
// a change of the resources names come from is applied after a short quiet time, mesh by mesh.
// The leader of the instances sharing the store allocates and writes the addresses; the others
// compute the same from what is stored and read the leader's again now and then.
import { dataplaneKind, externalServiceKind, meshKind, SERVICE_TAG, type TagMap, virtualOutboundKind, zoneIngressKind } from '@mesh/model';
import type { PolicyOf } from '@mesh/policy-matcher';
import type { ResourceChange, ResourceReader, StoredResource } from '@mesh/store';
import { dataplaneOf, externalServiceOf, policyOf, zoneIngressOf } from './resources.js';
import { allocateVips, type MeshVips, meshVipsOf, sameAddresses, type VipAddresses, vipHostsOf, type VipInbound, type VipSettings, vipSettingKey } from './vips.js';

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

/** A dataplane's inbounds as its mesh's names read them, from one stored version of it. */
interface DataplaneInbounds {
  stored: StoredResource;
  inbounds: VipInbound[];
  /** The service and port of each inbound, as `<service> NUL <port>`. */
  servicePorts: string[];
}

function inboundsOf(stored: StoredResource): DataplaneInbounds {
  const inbounds = (dataplaneOf(stored).spec.networking?.inbound ?? []).map(({ port, tags }) => ({ port, tags }));
  return { stored, inbounds, servicePorts: inbounds.map(({ port, tags }) => `${tags?.[SERVICE_TAG] ?? ''}\u0000${port ?? 0}`) };
}

const sameTags = (a: TagMap | undefined, b: TagMap | undefined): boolean => {
  const keys = Object.keys(a ?? {});
  return keys.length === Object.keys(b ?? {}).length && keys.every((key) => a![key] === b?.[key]);
};

const sameInbounds = (a: readonly VipInbound[], b: readonly VipInbound[]): boolean =>
  a.length === b.length && a.every((inbound, i) => inbound.port === b[i]!.port && sameTags(inbound.tags, b[i]!.tags));

/**
 * The dataplanes of a mesh as its names read them, as of the last pass over it and the changes
 * taken in since: each one's inbounds, and how many offer each service port. Without
 * VirtualOutbounds a dataplane gives the mesh only the service ports it offers (the same for
 * every dataplane offering one), so a change that leaves the set of offered service ports as it
 * was, a new instance of a service or a proxy moved to another address, changes no name.
 */
class MeshDataplanes {
  readonly byName = new Map<string, DataplaneInbounds>();
  private readonly offered = new Map<string, number>();

  constructor(private readonly virtualOutbounds: boolean) {}

  add(dataplane: DataplaneInbounds): void {
    this.byName.set(dataplane.stored.name, dataplane);
    for (const servicePort of dataplane.servicePorts) this.offered.set(servicePort, (this.offered.get(servicePort) ?? 0) + 1);
  }

  /**
   * Takes in the new version of a dataplane (none once deleted) when the mesh's names stay the
   * same with it; false, and nothing taken in, when they may not.
   */
  absorb(name: string, after: DataplaneInbounds | undefined): boolean {
    const before = this.byName.get(name);
    const sameInboundsAsBefore = before !== undefined && after !== undefined && sameInbounds(before.inbounds, after.inbounds);
    if (!sameInboundsAsBefore && this.virtualOutbounds) return false;
    const delta = new Map<string, number>();
    for (const servicePort of before?.servicePorts ?? []) delta.set(servicePort, (delta.get(servicePort) ?? 0) - 1);
    for (const servicePort of after?.servicePorts ?? []) delta.set(servicePort, (delta.get(servicePort) ?? 0) + 1);
    for (const [servicePort, change] of delta) {
      const offered = this.offered.get(servicePort) ?? 0;
      if (offered === 0 || offered + change <= 0) return false;
    }
    for (const [servicePort, change] of delta) this.offered.set(servicePort, this.offered.get(servicePort)! + change);
    if (after) this.byName.set(name, after);
    else this.byName.delete(name);
    return true;
  }
}

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
   * The dataplanes of each mesh as of its last pass and the changes taken in since: a pass parses
   * only the dataplanes written since the one before, and a change that leaves the mesh's names
   * as they were needs no pass at all.
   */
  private readonly dataplanesByMesh = new Map<string, MeshDataplanes>();
  /** Dataplane changes taken in without a pass, counted: a pass that read its list before some knows it missed them. */
  private absorbed = 0;
  /** Changes announced and not taken in yet. */
  private readonly unseen: Array<{ change: ResourceChange; resource: StoredResource | undefined }> = [];
  private stopped = false;

  constructor(options: VipAllocatorOptions) {
    this.options = options;
  }

  /** Computes every mesh's addresses, then follows changes. */
  async start(): Promise<void> {
    this.unsubscribe = this.options.store.onChange((change, resource) => {
      if (!SOURCE_TYPES.has(change.type)) return;
      // Taken in on the next turn of the event loop, after the write that announced it has answered.
      this.unseen.push({ change, resource });
      if (this.unseen.length === 1) setImmediate(() => this.takeIn());
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
    this.takeIn();
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

  /** Takes in the changes announced since the last call: most dataplane writes leave the names as they were. */
  private takeIn(): void {
    for (const { change, resource } of this.unseen.splice(0)) {
      if (change.type === dataplaneKind.name && this.absorbs(change, resource)) continue;
      if (change.type === zoneIngressKind.name) this.pendingAll = true;
      else this.pendingMeshes.add(change.type === meshKind.name ? change.name : change.mesh);
      this.schedule();
    }
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
    for (const mesh of this.dataplanesByMesh.keys()) if (!existing.has(mesh)) this.dataplanesByMesh.delete(mesh);
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
    const absorbedBefore = this.absorbed;
    const [dataplanes, externalServices, virtualOutbounds] = await Promise.all([list(dataplaneKind.name), list(externalServiceKind.name), list(virtualOutboundKind.name)]);
    const known = this.dataplanesByMesh.get(mesh);
    const current = new MeshDataplanes(virtualOutbounds.length > 0);
    for (const stored of dataplanes) {
      const kept = known?.byName.get(stored.name);
      current.add(kept?.stored === stored ? kept : inboundsOf(stored));
    }
    this.dataplanesByMesh.set(mesh, current);
    if (this.absorbed !== absorbedBefore) {
      // Changes taken in while the lists were read may be missing from them: read them again.
      this.pendingMeshes.add(mesh);
      this.schedule();
    }
    const hosts = vipHostsOf(
      {
        mesh,
        dataplaneInbounds: Array.from(current.byName.values(), ({ inbounds }) => inbounds),
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

  /** Whether a dataplane's change leaves its mesh's names as they were, taken in then without a pass. */
  private absorbs(change: ResourceChange, resource: StoredResource | undefined): boolean {
    const dataplanes = this.dataplanesByMesh.get(change.mesh);
    // Known to the last pass unless created since; a pass that never saw it decides.
    if (!dataplanes || dataplanes.byName.has(change.name) !== (change.operation !== 'create')) return false;
    if (!dataplanes.absorb(change.name, resource && inboundsOf(resource))) return false;
    this.absorbed++;
    return true;
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
