// Proxy insights from real streams (docs/xds.md, Insights): each stream is one subscription of
// its proxy's insight (DataplaneInsight, ZoneIngressInsight, ZoneEgressInsight), counted as
// responses go out and ACKs and NACKs come in, and written through the resource manager when it
// changed: at connect, every flush interval, and at disconnect. A finalizer closes the
// subscriptions of streams a control plane lost without closing them (a crash).
import { randomUUID } from 'node:crypto';
import { DomainError, getKind, INSIGHT_LINKS } from '@mesh/model';
import type { ResourceManager } from '@mesh/resource-manager';
import type { ResourceReader } from '@mesh/store';
import { RESOURCE_TYPE_OF } from './proxy-node.js';
import { STAT_OF_TYPE } from './snapshot.js';

interface Counters {
  sent: number;
  acknowledged: number;
  rejected: number;
}

const newCounters = (): Counters => ({ sent: 0, acknowledged: 0, rejected: 0 });

/** uint64 counters travel as strings; zero values are left out. */
function countersJson(counters: Counters): Record<string, string> {
  const out: Record<string, string> = {};
  if (counters.sent) out.responsesSent = String(counters.sent);
  if (counters.acknowledged) out.responsesAcknowledged = String(counters.acknowledged);
  if (counters.rejected) out.responsesRejected = String(counters.rejected);
  return out;
}

/** The mTLS figures of a dataplane's insight. */
export interface MtlsFigures {
  certificateExpirationTime: string;
  lastCertificateRegeneration: string;
  issuedBackend: string;
  supportedBackends: string[];
}

/** One stream's subscription, as its proxy's insight records it. */
export class Subscription {
  readonly id = randomUUID();
  readonly connectTime: string;
  disconnectTime: string | undefined;
  /** A Date, formatted when written: every response and ACK moves it. */
  private lastUpdate: Date;
  private readonly total = newCounters();
  private readonly byType = { cds: newCounters(), eds: newCounters(), lds: newCounters(), rds: newCounters() };
  version: Record<string, unknown> = {};
  generation = 0;
  /** Changed since the last write. */
  dirty = true;

  constructor(
    readonly controlPlaneInstanceId: string,
    private readonly now: () => Date,
  ) {
    this.lastUpdate = now();
    this.connectTime = this.lastUpdate.toISOString();
  }

  private touch(): void {
    this.lastUpdate = this.now();
    this.dirty = true;
  }

  responseSent(typeUrl: string): void {
    this.total.sent++;
    const stat = STAT_OF_TYPE[typeUrl];
    if (stat) this.byType[stat].sent++;
    this.touch();
  }

  /** A request answering a response: an ACK, or a NACK when it carries an error. */
  responseAnswered(typeUrl: string, rejected: boolean): void {
    const field = rejected ? 'rejected' : 'acknowledged';
    this.total[field]++;
    const stat = STAT_OF_TYPE[typeUrl];
    if (stat) this.byType[stat][field]++;
    this.touch();
  }

  disconnect(): void {
    this.disconnectTime = this.now().toISOString();
    this.dirty = true;
  }

  /** The next generation: the finalizer sees the stream is alive. */
  advanceGeneration(): void {
    this.generation++;
    this.dirty = true;
  }

  toJson(): Record<string, unknown> {
    const status: Record<string, unknown> = { lastUpdateTime: this.lastUpdate.toISOString(), total: countersJson(this.total) };
    for (const [stat, counters] of Object.entries(this.byType)) status[stat] = countersJson(counters);
    return {
      id: this.id,
      controlPlaneInstanceId: this.controlPlaneInstanceId,
      connectTime: this.connectTime,
      ...(this.disconnectTime ? { disconnectTime: this.disconnectTime } : {}),
      status,
      version: this.version,
      ...(this.generation ? { generation: this.generation } : {}),
    };
  }
}

interface StoredSubscription {
  id?: string;
  controlPlaneInstanceId?: string;
  disconnectTime?: string;
  generation?: number;
}

interface StoredInsight {
  subscriptions?: StoredSubscription[];
  mTLS?: { certificateRegenerations?: number } & Record<string, unknown>;
}

/** The insight kind of a proxy resource kind (Dataplane, ZoneIngress, ZoneEgress). */
export function insightKindOf(resourceType: string) {
  const link = INSIGHT_LINKS.find((candidate) => candidate.entity.name === resourceType);
  if (!link) throw new Error(`${resourceType} has no insight`);
  return link.insight;
}

const isConflict = (error: unknown): boolean => error instanceof DomainError && (error.code === 'conflict' || error.code === 'already_exists');

const MAX_WRITE_ATTEMPTS = 5;

export interface InsightWriterOptions {
  manager: ResourceManager;
  store: ResourceReader;
  /** Subscriptions kept per insight (`metrics.dataplane.subscriptionLimit`). */
  subscriptionLimit: number;
  now: () => Date;
  onError: (error: unknown, what: string) => void;
}

/**
 * Writes subscriptions into insights, one write at a time per insight. A write reads the insight,
 * replaces the subscription of the same id (or closes the earlier open ones and appends it),
 * keeps the last `subscriptionLimit`, and retries when another writer (another instance, the
 * finalizer) got there first.
 */
export class InsightWriter {
  private readonly queues = new Map<string, Promise<void>>();

  constructor(private readonly options: InsightWriterOptions) {}

  /** Records a subscription (and the dataplane's mTLS figures, undefined when mTLS is off). */
  write(resourceType: string, mesh: string, name: string, subscription: Subscription, mtls?: { figures: MtlsFigures | undefined; regenerated: boolean }): Promise<void> {
    const key = `${resourceType}\u0000${mesh}\u0000${name}`;
    subscription.dirty = false;
    const json = subscription.toJson();
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.writeNow(resourceType, mesh, name, json, mtls))
      .catch((error: unknown) => {
        subscription.dirty = true;
        this.options.onError(error, `the insight of ${mesh ? `${mesh}/` : ''}${name}`);
      });
    this.queues.set(key, next);
    void next.then(() => {
      if (this.queues.get(key) === next) this.queues.delete(key);
    });
    return next;
  }

  /** Resolves once every write begun so far is done. */
  async drained(): Promise<void> {
    while (this.queues.size > 0) await Promise.all(this.queues.values());
  }

  private async writeNow(
    resourceType: string,
    mesh: string,
    name: string,
    subscription: Record<string, unknown>,
    mtls: { figures: MtlsFigures | undefined; regenerated: boolean } | undefined,
  ): Promise<void> {
    const insightKind = insightKindOf(resourceType);
    const scopedMesh = insightKind.scope === 'mesh' ? mesh : '';
    for (let attempt = 1; ; attempt++) {
      // The proxy itself may be gone (deleted through the API): its insight goes with it.
      if (!(await this.options.store.get({ type: resourceType, mesh: scopedMesh, name }))) return;
      const stored = await this.options.store.get({ type: insightKind.name, mesh: scopedMesh, name });
      const current = stored ? (JSON.parse(stored.spec) as StoredInsight) : {};
      const body: Record<string, unknown> = { ...current, type: insightKind.name, name, subscriptions: this.merged(current.subscriptions ?? [], subscription) };
      if (insightKind.scope === 'mesh') body.mesh = mesh;
      if (mtls) {
        if (mtls.figures) {
          const regenerations = (current.mTLS?.certificateRegenerations ?? 0) + (mtls.regenerated ? 1 : 0);
          body.mTLS = { ...mtls.figures, ...(regenerations ? { certificateRegenerations: regenerations } : {}) };
        } else {
          delete body.mTLS;
        }
      }
      try {
        await this.options.manager.apply(getKind(insightKind.name), { mesh: scopedMesh, name }, body);
        return;
      } catch (error) {
        if (!isConflict(error) || attempt >= MAX_WRITE_ATTEMPTS) throw error;
      }
    }
  }

  private merged(existing: StoredSubscription[], subscription: Record<string, unknown>): unknown[] {
    const at = existing.findIndex((candidate) => candidate.id === subscription.id);
    let subscriptions: unknown[];
    if (at >= 0) {
      subscriptions = existing.map((candidate, index) => (index === at ? subscription : candidate));
    } else {
      const now = this.options.now().toISOString();
      // A new stream of the proxy: the ones before it are over, whatever their instance said.
      subscriptions = [...existing.map((candidate) => (candidate.disconnectTime ? candidate : { ...candidate, disconnectTime: now })), subscription];
    }
    return subscriptions.slice(-Math.max(1, this.options.subscriptionLimit));
  }
}

/** The proxy kinds whose insights record xDS streams. */
const PROXY_KINDS = Object.values(RESOURCE_TYPE_OF).map(insightKindOf);

/**
 * Closes open subscriptions nobody keeps alive (docs/xds.md, Insights): each `sweep` closes those
 * whose generation did not move since the previous sweep (live streams move theirs every half
 * idle timeout; the leader sweeps every idle timeout).
 */
export class SubscriptionFinalizer {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly manager: ResourceManager,
    private readonly store: ResourceReader,
    private readonly now: () => Date,
  ) {}

  async sweep(): Promise<number> {
    const previous = new Map(this.seen);
    this.seen.clear();
    return this.finalize((id, generation) => {
      const stale = previous.get(id) === generation;
      if (!stale) this.seen.set(id, generation);
      return stale;
    });
  }

  private async finalize(isStale: (id: string, generation: number) => boolean): Promise<number> {
    let closed = 0;
    for (const kind of PROXY_KINDS) {
      const { items } = await this.store.list({ type: kind.name, offset: 0, size: 0 });
      for (const stored of items) {
        const spec = JSON.parse(stored.spec) as StoredInsight;
        const stale = (spec.subscriptions ?? []).filter((s) => s.id && !s.disconnectTime && isStale(s.id, s.generation ?? 0));
        if (stale.length === 0) continue;
        const now = this.now().toISOString();
        const staleIds = new Set(stale.map((s) => s.id));
        const subscriptions = (spec.subscriptions ?? []).map((s) => (staleIds.has(s.id) ? { ...s, disconnectTime: now } : s));
        const body = { ...spec, type: kind.name, name: stored.name, ...(kind.scope === 'mesh' ? { mesh: stored.mesh } : {}), subscriptions };
        try {
          await this.manager.apply(kind, { mesh: stored.mesh, name: stored.name }, body);
          closed += stale.length;
        } catch (error) {
          // A stream's own write got there first: it is alive, or will be swept next time.
          if (!isConflict(error)) throw error;
        }
      }
    }
    return closed;
  }
}
