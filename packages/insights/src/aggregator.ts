// Keeps every mesh's MeshInsight and ServiceInsights up to date from the store's change events:
// a change to a dataplane or its insight re-reads just that dataplane, subtracts what it added
// before and adds what it adds now; policy counts come from the store's counters.
import {
  dataplaneInsightKind,
  dataplaneKind,
  externalServiceKind,
  everyPolicyKind,
  isAnyPolicyKind,
  meshKind,
  SERVICE_TAG,
  zoneEgressInsightKind,
  zoneIngressInsightKind,
  zoneInsightKind,
  type AnyKind,
} from '@mesh/model';
import { parsedSpec, type ResourceChange, type ResourceReader, type StoredResource } from '@mesh/store';
import { dataplaneContribution, type ProxyType } from './contribution.js';
import { type ExternalServiceEntry, type MeshInsightSpec, MeshTally, type ServiceStat, type StatusCounts } from './mesh-tally.js';
import { isConnected, type DataplaneStatus } from './status.js';
import type { StoredDataplane, StoredDataplaneInsight, StoredExternalService, Subscription } from './stored.js';

export interface InsightAggregatorOptions {
  store: ResourceReader;
  /** Source of the insights' times; tests pin it. */
  now?: () => Date;
  /** A change that could not be applied (the aggregate stays as it was). */
  onError?: (error: unknown) => void;
}

export interface MeshInsight {
  mesh: string;
  creationTime: string;
  /** The time of the latest change of the figures; served as `modificationTime` and `lastSync`. */
  modificationTime: string;
  spec: MeshInsightSpec;
}

export interface ServiceInsight {
  mesh: string;
  name: string;
  creationTime: string;
  modificationTime: string;
  stat: ServiceStat;
}

/**
 * A mesh or service insight that a store change altered: its new value, or none when it is gone
 * (its mesh deleted, or nothing names the service any more).
 */
export type InsightChange =
  | { type: 'MeshInsight'; name: string; insight: MeshInsight | undefined }
  | { type: 'ServiceInsight'; mesh: string; name: string; insight: ServiceInsight | undefined };

/** Told after each store change is applied, in revision order, with the insights it altered (often none). */
export type AppliedListener = (change: ResourceChange, insights: readonly InsightChange[]) => void;

/** What the insights of a mesh were before a change, to tell what the change altered. */
interface Observed {
  tally: MeshTally | undefined;
  meshInsight: MeshInsightSpec | undefined;
  services: readonly string[];
  serviceChanges: number;
}

/** A service of a mesh, found without computing its stat (lists render only their page). */
export interface ServiceRef {
  mesh: string;
  name: string;
}

interface OnlineCounts {
  online: number;
  total: number;
}

/** `/global-insight` (2.5.0): sums over meshes and zones; every key present, zeros included. */
export interface GlobalInsight {
  createdAt: string;
  meshes: { total: number };
  dataplanes: Record<ProxyType, StatusCounts>;
  policies: { total: number };
  services: { internal: StatusCounts; external: { total: number }; gatewayBuiltin: StatusCounts; gatewayDelegated: StatusCounts };
  zones: { controlPlanes: OnlineCounts; zoneIngresses: OnlineCounts; zoneEgresses: OnlineCounts };
}

const parseSpec = <T>(resource: StoredResource): T => JSON.parse(resource.spec) as T;

const externalServiceEntry = (spec: StoredExternalService): ExternalServiceEntry => ({
  service: spec.tags?.[SERVICE_TAG] ?? '',
  address: spec.networking?.address ?? '',
});

const everything = { offset: 0, size: 0 } as const;

/** The longest loading a mesh holds the event loop at a time, in milliseconds. */
const SLICE_MS = 10;

export class InsightAggregator {
  private readonly store: ResourceReader;
  private readonly now: () => Date;
  private readonly onError: (error: unknown) => void;
  private readonly meshes = new Map<string, MeshTally>();
  /**
   * The insights handed out, by the figures they wrap: a tally returns the same spec or stat
   * object until its figures (and with them its times) change, so an unchanged insight is the
   * same object from one read to the next and readers may cache what they derive from it.
   */
  private readonly meshInsights = new WeakMap<MeshInsightSpec, MeshInsight>();
  private readonly serviceInsights = new WeakMap<ServiceStat, ServiceInsight>();
  private sortedMeshes: string[] | undefined;
  /** Changes are applied one at a time, in the order the store announced them. */
  private queue: Promise<void> = Promise.resolve();
  /** Changes announced and not yet applied: the next turn of the event loop applies them together. */
  private readonly unapplied: ResourceChange[] = [];
  private unsubscribe: (() => void) | undefined;
  private readonly appliedListeners = new Set<AppliedListener>();

  constructor(options: InsightAggregatorOptions) {
    this.store = options.store;
    this.now = options.now ?? (() => new Date());
    this.onError = options.onError ?? (() => {});
  }

  /** Listens to changes, then computes every mesh's figures once. */
  async start(): Promise<void> {
    this.unsubscribe = this.store.onChange((change) => this.noteChange(change));
    // Changes announced while loading queue up behind it; a failed load fails the start.
    const loaded = this.queue.then(() => this.loadAll());
    this.queue = loaded.catch(this.onError);
    await loaded;
  }

  /** Stops listening and waits for the changes already queued (before the store closes). */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await this.queue;
  }

  /** Resolves once every change announced so far is reflected (reads see the writes before them). */
  settled(): Promise<void> {
    return this.queue;
  }

  /**
   * Listens for each change once applied, with the insights it altered: what streams of changes
   * (docs/api.md, Change stream) send for the insights nobody stores.
   */
  onApplied(listener: AppliedListener): () => void {
    this.appliedListeners.add(listener);
    return () => this.appliedListeners.delete(listener);
  }

  /** Names of the meshes, in code-unit order. */
  meshNames(): readonly string[] {
    this.sortedMeshes ??= [...this.meshes.keys()].sort();
    return this.sortedMeshes;
  }

  /** A mesh's insight; the same (shared, not to be modified) object while it does not change. */
  meshInsight(mesh: string): MeshInsight | undefined {
    const tally = this.meshes.get(mesh);
    if (!tally) return undefined;
    const spec = tally.meshInsight();
    let insight = this.meshInsights.get(spec);
    if (!insight) this.meshInsights.set(spec, (insight = { mesh, creationTime: tally.creationTime, modificationTime: tally.meshInsightTime, spec }));
    return insight;
  }

  /** A proxy's status as the mesh's counts have it (docs/insights.md, Status); undefined for a proxy they do not hold. */
  dataplaneStatus(mesh: string, name: string): DataplaneStatus | undefined {
    return this.meshes.get(mesh)?.dataplaneStatus(name);
  }

  /** The services of one mesh (or of all meshes), sorted by mesh then name; `nameContains` filters. */
  listServices(mesh: string | undefined, nameContains: string): ServiceRef[] {
    const meshes = mesh === undefined ? this.meshNames() : this.meshes.has(mesh) ? [mesh] : [];
    const refs: ServiceRef[] = [];
    for (const meshName of meshes) {
      for (const name of this.meshes.get(meshName)!.serviceNames()) {
        if (name.includes(nameContains)) refs.push({ mesh: meshName, name });
      }
    }
    return refs;
  }

  /**
   * A service's insight; undefined only when the mesh does not exist. The same (shared, not to
   * be modified) object while the mesh's services do not change.
   */
  serviceInsight(mesh: string, name: string): ServiceInsight | undefined {
    const tally = this.meshes.get(mesh);
    if (!tally) return undefined;
    const stat = tally.serviceStat(name);
    let insight = this.serviceInsights.get(stat);
    if (!insight) this.serviceInsights.set(stat, (insight = { mesh, name, creationTime: tally.creationTime, modificationTime: tally.serviceInsightTime, stat }));
    return insight;
  }

  async globalInsight(): Promise<GlobalInsight> {
    const full = (): StatusCounts => ({ total: 0, online: 0, offline: 0, partiallyDegraded: 0 });
    const addCounts = (into: StatusCounts, from: Readonly<StatusCounts>) => {
      into.total += from.total;
      into.online += from.online;
      into.offline += from.offline;
      into.partiallyDegraded += from.partiallyDegraded;
    };
    const insight: GlobalInsight = {
      createdAt: this.now().toISOString(),
      meshes: { total: this.meshes.size },
      dataplanes: { standard: full(), gatewayBuiltin: full(), gatewayDelegated: full() },
      policies: { total: 0 },
      services: { internal: full(), external: { total: 0 }, gatewayBuiltin: full(), gatewayDelegated: full() },
      zones: {
        controlPlanes: await this.countConnected(zoneInsightKind),
        zoneIngresses: await this.countConnected(zoneIngressInsightKind),
        zoneEgresses: await this.countConnected(zoneEgressInsightKind),
      },
    };
    for (const tally of this.meshes.values()) {
      const summary = tally.summary();
      addCounts(insight.dataplanes.standard, summary.dataplanesByType.standard);
      addCounts(insight.dataplanes.gatewayBuiltin, summary.dataplanesByType.gatewayBuiltin);
      addCounts(insight.dataplanes.gatewayDelegated, summary.dataplanesByType.gatewayDelegated);
      insight.policies.total += summary.policies;
      addCounts(insight.services.internal, summary.services.internal);
      addCounts(insight.services.gatewayBuiltin, summary.services.gateway_builtin);
      addCounts(insight.services.gatewayDelegated, summary.services.gateway_delegated);
      insight.services.external.total += summary.services.external.total;
    }
    return insight;
  }

  /**
   * Queues a change to be applied on the next turn of the event loop, with the others announced
   * until then: after the write that announced it has answered, since its caller does not wait for
   * the figures it moves, while reads of them wait (`settled`) (docs/insights.md, Freshness).
   */
  private noteChange(change: ResourceChange): void {
    this.unapplied.push(change);
    if (this.unapplied.length > 1) return;
    this.queue = this.queue.then(async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      for (const next of this.unapplied.splice(0)) await this.applyAndReport(next).catch(this.onError);
    });
  }

  private async loadAll(): Promise<void> {
    const meshes = await this.store.list({ type: meshKind.name, ...everything });
    for (const mesh of meshes.items) await this.loadMesh(mesh);
  }

  private async loadMesh(meshResource: StoredResource): Promise<void> {
    const mesh = meshResource.name;
    const time = this.now().toISOString();
    const tally = new MeshTally(meshResource.creationTime, time);
    for (const { name } of everyPolicyKind()) tally.setPolicyCount(name, await this.store.count(name, mesh), time);
    const listInMesh = (kind: AnyKind) => this.store.list({ type: kind.name, mesh, ...everything });
    const [dataplanes, insights, externalServices] = await Promise.all([listInMesh(dataplaneKind), listInMesh(dataplaneInsightKind), listInMesh(externalServiceKind)]);
    const insightByName = new Map(insights.items.map((insight) => [insight.name, parseSpec<StoredDataplaneInsight>(insight)]));
    // In slices that leave the event loop to others (the API serves while a control plane starts);
    // the tally is seen once complete, and changes meanwhile queue behind the load.
    let sliceEnd = performance.now() + SLICE_MS;
    for (const dataplane of dataplanes.items) {
      tally.setDataplane(dataplane.name, dataplaneContribution(parsedSpec<StoredDataplane>(dataplane), insightByName.get(dataplane.name)), time);
      if (performance.now() < sliceEnd) continue;
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceEnd = performance.now() + SLICE_MS;
    }
    for (const service of externalServices.items) tally.setExternalService(service.name, externalServiceEntry(parseSpec(service)), time);
    this.meshes.set(mesh, tally);
    this.sortedMeshes = undefined;
  }

  private async applyAndReport(change: ResourceChange): Promise<void> {
    if (this.appliedListeners.size === 0) return this.applyChange(change);
    const mesh = change.type === meshKind.name ? change.name : change.mesh;
    const before = this.observe(mesh);
    try {
      await this.applyChange(change);
    } finally {
      const altered = this.alteredInsights(mesh, before);
      for (const listener of this.appliedListeners) listener(change, altered);
    }
  }

  private observe(mesh: string): Observed {
    const tally = this.meshes.get(mesh);
    return { tally, meshInsight: tally?.meshInsight(), services: tally?.serviceNames() ?? [], serviceChanges: tally?.serviceInsightChanges ?? 0 };
  }

  /** The insights of a mesh that differ from what was observed: memoised figures are the same objects while unchanged. */
  private alteredInsights(mesh: string, before: Observed): InsightChange[] {
    const after = this.observe(mesh);
    const altered: InsightChange[] = [];
    const replaced = before.tally !== after.tally;
    if (replaced || before.meshInsight !== after.meshInsight) altered.push({ type: 'MeshInsight', name: mesh, insight: after.tally && this.meshInsight(mesh) });
    if (replaced || before.serviceChanges !== after.serviceChanges) {
      const current = new Set(after.services);
      for (const name of before.services) if (!current.has(name)) altered.push({ type: 'ServiceInsight', mesh, name, insight: undefined });
      for (const name of after.services) altered.push({ type: 'ServiceInsight', mesh, name, insight: this.serviceInsight(mesh, name) });
    }
    return altered;
  }

  private async applyChange(change: ResourceChange): Promise<void> {
    const { type, mesh, name, operation } = change;
    if (type === meshKind.name) {
      if (operation === 'delete') {
        this.meshes.delete(name);
        this.sortedMeshes = undefined;
      } else if (!this.meshes.has(name)) {
        const created = await this.store.get({ type, mesh: '', name });
        if (created) await this.loadMesh(created);
      }
      return;
    }
    // Changes in a mesh that is gone (its own cascade) or not there yet (its load reads them).
    const tally = this.meshes.get(mesh);
    if (!tally) return;
    const time = this.now().toISOString();
    if (type === dataplaneKind.name || type === dataplaneInsightKind.name) {
      const [dataplane, insight] = await Promise.all([
        this.store.get({ type: dataplaneKind.name, mesh, name }),
        this.store.get({ type: dataplaneInsightKind.name, mesh, name }),
      ]);
      const contribution = dataplane && dataplaneContribution(parsedSpec<StoredDataplane>(dataplane), insight && parseSpec(insight));
      tally.setDataplane(name, contribution, time);
    } else if (type === externalServiceKind.name) {
      const service = await this.store.get({ type, mesh, name });
      tally.setExternalService(name, service && externalServiceEntry(parseSpec(service)), time);
    } else if (isAnyPolicyKind(type) && operation !== 'update') {
      tally.setPolicyCount(type, await this.store.count(type, mesh), time);
    }
  }

  private async countConnected(kind: AnyKind): Promise<OnlineCounts> {
    const { items } = await this.store.list({ type: kind.name, ...everything });
    const online = items.filter((insight) => isConnected(parseSpec<{ subscriptions?: Subscription[] }>(insight).subscriptions)).length;
    return { online, total: items.length };
  }
}
