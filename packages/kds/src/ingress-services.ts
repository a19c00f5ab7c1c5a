// The services a zone's ingresses make available to other zones (`availableServices`), kept up to
// date from store changes and written only when they differ (docs/multizone.md, Zone ingresses).
import {
  CONTROL_PLANE_LABELS,
  dataplaneKind,
  externalServiceKind,
  meshKind,
  ORIGIN_LABEL,
  ZONE_TAG,
  zoneIngressKind,
  type DataplaneSpec,
  type ExternalServiceSpec,
  type MeshSpec,
  type ZoneIngressSpec,
} from '@mesh/model';
import type { ResourceManager } from '@mesh/resource-manager';
import type { ResourceChange, StoredResource } from '@mesh/store';
import type { SyncLogger } from './telemetry.js';

export interface ZoneIngressServicesOptions {
  manager: ResourceManager;
  /** This zone's name; '' on a standalone control plane. */
  zone: string;
  /** Tag keys kept in the advertised tags, by prefix (`experimental.ingressTagFilters`); all when empty. */
  tagFilters: readonly string[];
  /** The work runs on the leader of the instances sharing the store. */
  isLeader: () => boolean;
  logger: SyncLogger;
}

/** One entry of `availableServices`, as this control plane writes it. */
interface AvailableService {
  tags: Record<string, string>;
  instances: number;
  mesh: string;
  externalService?: true;
}

const WATCHED = new Set<string>([dataplaneKind.name, externalServiceKind.name, meshKind.name, zoneIngressKind.name]);

/** Tags in a fixed order, `k=v` joined by commas: the key services are counted and sorted by. */
const canonical = (tags: Record<string, string>) =>
  Object.keys(tags)
    .sort()
    .map((key) => `${key}=${tags[key]}`)
    .join(',');

const sortedTags = (tags: Record<string, string>) => Object.fromEntries(Object.keys(tags).sort().map((key) => [key, tags[key]!]));

/** Counts service instances by (mesh, tags), sorted by mesh then tags. */
class ServiceCounter {
  private readonly counts = new Map<string, AvailableService>();

  add(mesh: string, tags: Record<string, string>, externalService: boolean): void {
    const id = `${mesh}\u0000${canonical(tags)}`;
    const known = this.counts.get(id);
    if (known) known.instances += 1;
    else this.counts.set(id, { tags: sortedTags(tags), instances: 1, mesh, ...(externalService ? { externalService: true } : {}) });
  }

  list(): AvailableService[] {
    return [...this.counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, service]) => service);
  }
}

/**
 * The services of this zone: every inbound of a local dataplane that is not reported unready
 * (counted per inbound), then external services this zone reaches through its egress in meshes
 * that route through zone egresses.
 */
export function availableServices(
  dataplanes: readonly StoredResource[],
  externalServices: readonly StoredResource[],
  meshes: readonly StoredResource[],
  zone: string,
  tagFilters: readonly string[],
): AvailableService[] {
  const filtered = (tags: Record<string, string>) =>
    tagFilters.length === 0 ? tags : Object.fromEntries(Object.entries(tags).filter(([key]) => tagFilters.some((prefix) => key.startsWith(prefix))));
  const internal = new ServiceCounter();
  for (const dataplane of dataplanes) {
    for (const inbound of (JSON.parse(dataplane.spec) as DataplaneSpec).networking?.inbound ?? []) {
      if (inbound.health && inbound.health.ready !== true) continue;
      internal.add(dataplane.mesh, filtered(inbound.tags ?? {}), false);
    }
  }
  const egressMeshes = new Set(meshes.filter((mesh) => (JSON.parse(mesh.spec) as MeshSpec).routing?.zoneEgress === true).map((mesh) => mesh.name));
  const external = new ServiceCounter();
  for (const service of externalServices) {
    const tags = (JSON.parse(service.spec) as ExternalServiceSpec).tags ?? {};
    if (egressMeshes.has(service.mesh) && tags[ZONE_TAG] === zone) external.add(service.mesh, filtered(tags), true);
  }
  return [...internal.list(), ...external.list()];
}

/** Keeps the `availableServices` of this zone's own ingresses true. */
export class ZoneIngressServices {
  private unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: ZoneIngressServicesOptions) {}

  start(): void {
    this.unsubscribe = this.options.manager.reader.onChange((change) => this.onChange(change));
    this.schedule();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Recomputes now and waits for the writes (tests, and a leader taking over). */
  refresh(): Promise<void> {
    this.running = this.running.then(() => this.update()).catch((err: unknown) => this.options.logger.error({ err }, 'zone ingress services could not be updated'));
    return this.running;
  }

  private onChange(change: ResourceChange): void {
    if (WATCHED.has(change.type)) this.schedule();
  }

  /** Changes come in bursts (a proxy and its neighbours): one recomputation shortly after. */
  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, 50);
    this.timer.unref();
  }

  private isOwnIngress(ingress: StoredResource): boolean {
    const zone = (JSON.parse(ingress.spec) as ZoneIngressSpec).zone ?? '';
    return ingress.labels[ORIGIN_LABEL] !== 'global' && (zone === '' || zone === this.options.zone);
  }

  private async update(): Promise<void> {
    const { manager, zone, tagFilters, isLeader } = this.options;
    if (!isLeader()) return;
    const all = (type: string) => manager.reader.list({ type, offset: 0, size: 0 }).then((page) => page.items);
    const ingresses = (await all(zoneIngressKind.name)).filter((ingress) => this.isOwnIngress(ingress));
    if (ingresses.length === 0) return;
    const services = availableServices(await all(dataplaneKind.name), await all(externalServiceKind.name), await all(meshKind.name), zone, tagFilters);
    for (const ingress of ingresses) {
      const spec = JSON.parse(ingress.spec) as ZoneIngressSpec;
      // Compared in stored form, so an unchanged list is never written again.
      const stored = JSON.stringify(zoneIngressKind.schema.parse({ ...spec, availableServices: spec.availableServices ?? [] }).availableServices);
      if (stored === JSON.stringify(zoneIngressKind.schema.parse({ ...spec, availableServices: services }).availableServices)) continue;
      const labels = Object.fromEntries(Object.entries(ingress.labels).filter(([key]) => !CONTROL_PLANE_LABELS.includes(key)));
      await manager.apply(zoneIngressKind, { mesh: '', name: ingress.name }, { ...spec, type: zoneIngressKind.name, name: ingress.name, labels, availableServices: services });
    }
  }
}
