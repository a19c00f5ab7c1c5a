// The global's record of each zone's sessions: a ZoneInsight subscription per session, with its
// counters, written at open, every flush interval when it changed, and at close
// (docs/multizone.md, Zone insights).
import { randomUUID } from 'node:crypto';
import { zoneInsightKind, type ZoneInsightSpec, type ZoneSyncSubscription } from '@mesh/model';
import type { ResourceManager } from '@mesh/resource-manager';
import type { ResourceReader } from '@mesh/store';
import type { Hello, Version } from './protocol.js';

export interface ZoneInsightOptions {
  manager: ResourceManager;
  store: ResourceReader;
  globalInstanceId: string;
  /** The global's own version, to tell whether a zone's is compatible. */
  version: Version;
  /** Subscriptions kept per zone, newest last; 0 keeps them all. */
  subscriptionLimit: number;
  /** Finished subscriptions lose their configuration and per-kind counters. */
  compactFinishedSubscriptions: boolean;
  now?: () => Date;
}

type Counters = { responsesSent: number; responsesAcknowledged: number; responsesRejected: number };
type Counter = keyof Counters;

const isOpen = (subscription: ZoneSyncSubscription) => subscription.connectTime !== undefined && subscription.disconnectTime === undefined;

/** Same major and minor within two: what the reference calls compatible; anything unparsable is. */
export function isCompatible(zone: string, global: string): boolean {
  const parse = (version: string) => /^(\d+)\.(\d+)\.\d+$/.exec(version);
  const [z, g] = [parse(zone), parse(global)];
  if (!z || !g) return true;
  return z[1] === g[1] && Math.abs(Number(z[2]) - Number(g[2])) <= 2;
}

/** One session's subscription, counted in memory and written by its recorder. */
export class ZoneSubscription {
  readonly id = randomUUID();
  private readonly connectTime: string;
  private lastUpdateTime: string;
  private disconnectTime: string | undefined;
  private generation = 0;
  private readonly total: Counters = { responsesSent: 0, responsesAcknowledged: 0, responsesRejected: 0 };
  private readonly stat = new Map<string, Counters>();
  private dirty = true;

  constructor(
    readonly zone: string,
    private readonly hello: Hello,
    private readonly recorder: ZoneInsightRecorder,
  ) {
    this.connectTime = this.lastUpdateTime = recorder.now();
  }

  get open(): boolean {
    return this.disconnectTime === undefined;
  }

  /** Counts a response (or its acknowledgement or rejection) of each kind named. */
  count(counter: Counter, kinds: readonly string[]): void {
    for (const kind of kinds) {
      let stat = this.stat.get(kind);
      if (!stat) this.stat.set(kind, (stat = { responsesSent: 0, responsesAcknowledged: 0, responsesRejected: 0 }));
      stat[counter] += 1;
      this.total[counter] += 1;
    }
    if (kinds.length > 0) this.touch();
  }

  /** A live session says so every half idle timeout, so the finalizer leaves it alone. */
  tick(): void {
    this.generation += 1;
    this.touch();
  }

  /** Writes the subscription when it changed since the last write. */
  flush(): Promise<void> {
    if (!this.dirty) return Promise.resolve();
    this.dirty = false;
    return this.recorder.write(this);
  }

  close(): Promise<void> {
    if (this.disconnectTime === undefined) {
      this.disconnectTime = this.recorder.now();
      this.touch();
    }
    return this.flush();
  }

  toJSON(): ZoneSyncSubscription {
    const stat = Object.fromEntries([...this.stat].sort(([a], [b]) => (a < b ? -1 : 1)).map(([kind, counters]) => [kind, countersJson(counters)]));
    const version = this.hello.version;
    return {
      id: this.id,
      globalInstanceId: this.recorder.globalInstanceId,
      connectTime: this.connectTime,
      ...(this.disconnectTime ? { disconnectTime: this.disconnectTime } : {}),
      status: { lastUpdateTime: this.lastUpdateTime, total: countersJson(this.total), stat },
      version: { meshCp: { ...version, meshCpGlobalCompatible: isCompatible(version.version, this.recorder.version.version) } },
      generation: this.generation,
      config: this.hello.config,
      url: this.hello.url,
    } as ZoneSyncSubscription;
  }

  private touch(): void {
    this.lastUpdateTime = this.recorder.now();
    this.dirty = true;
  }
}

/** uint64 counters travel as strings; zero values are left out. */
function countersJson(counters: Counters): Record<string, string> {
  return Object.fromEntries(Object.entries(counters).filter(([, n]) => n > 0).map(([name, n]) => [name, String(n)]));
}

/**
 * Writes zones' subscriptions into their ZoneInsight, one write at a time per zone: the newest
 * subscription closes older open ones, only the newest `subscriptionLimit` are kept.
 */
export class ZoneInsightRecorder {
  private readonly chains = new Map<string, Promise<void>>();
  /** Generations of open subscriptions at the finalizer's last run. */
  private lastSeen = new Map<string, number>();

  constructor(private readonly options: ZoneInsightOptions) {}

  get globalInstanceId(): string {
    return this.options.globalInstanceId;
  }

  get version(): Version {
    return this.options.version;
  }

  now(): string {
    return (this.options.now?.() ?? new Date()).toISOString();
  }

  open(zone: string, hello: Hello): ZoneSubscription {
    return new ZoneSubscription(zone, hello, this);
  }

  write(subscription: ZoneSubscription): Promise<void> {
    return this.update(subscription.zone, (spec) => {
      const subscriptions = [...(spec.subscriptions ?? [])];
      const json = subscription.toJSON();
      const at = subscriptions.findIndex((s) => s.id === json.id);
      if (at >= 0) {
        subscriptions[at] = json;
        return { ...spec, subscriptions };
      }
      const time = this.now();
      return { ...spec, subscriptions: [...subscriptions.map((s) => (isOpen(s) ? { ...s, disconnectTime: time } : s)), json] };
    });
  }

  /** The zone's last ping. */
  healthCheck(zone: string): Promise<void> {
    const time = this.now();
    return this.update(zone, (spec) => ({ ...spec, healthCheck: { time } }));
  }

  /**
   * Closes open subscriptions whose generation did not move since the last run: their global
   * instance is gone (the leader runs this every idle timeout). With `all`, closes every open one,
   * for a starting control plane that alone uses its store.
   */
  async finalize(all = false): Promise<void> {
    const seen = new Map<string, number>();
    const { items } = await this.options.store.list({ type: zoneInsightKind.name, offset: 0, size: 0 });
    for (const insight of items) {
      const stale = ((JSON.parse(insight.spec) as ZoneInsightSpec).subscriptions ?? []).filter((s) => {
        if (!isOpen(s)) return false;
        seen.set(s.id!, s.generation ?? 0);
        return all || this.lastSeen.get(s.id!) === (s.generation ?? 0);
      });
      if (stale.length === 0) continue;
      const ids = new Set(stale.map((s) => s.id));
      const time = this.now();
      await this.update(insight.name, (spec) => ({
        ...spec,
        subscriptions: (spec.subscriptions ?? []).map((s) => (ids.has(s.id) && isOpen(s) ? { ...s, disconnectTime: time } : s)),
      }));
    }
    this.lastSeen = seen;
  }

  /** Read, change and write one zone's insight, after its previous write. */
  private update(zone: string, change: (spec: ZoneInsightSpec) => ZoneInsightSpec): Promise<void> {
    const previous = this.chains.get(zone) ?? Promise.resolve();
    const next = previous.then(async () => {
      const { manager, store, subscriptionLimit, compactFinishedSubscriptions } = this.options;
      const current = await store.get({ type: zoneInsightKind.name, mesh: '', name: zone });
      const spec = change((current ? JSON.parse(current.spec) : {}) as ZoneInsightSpec);
      let subscriptions = spec.subscriptions ?? [];
      if (subscriptionLimit > 0) subscriptions = subscriptions.slice(-subscriptionLimit);
      if (compactFinishedSubscriptions) {
        subscriptions = subscriptions.map((s, i) => (i === subscriptions.length - 1 || isOpen(s) ? s : compacted(s)));
      }
      await manager.apply(zoneInsightKind, { mesh: '', name: zone }, { ...spec, type: zoneInsightKind.name, name: zone, subscriptions });
    });
    const settled = next.catch(() => {});
    this.chains.set(zone, settled);
    void settled.then(() => {
      if (this.chains.get(zone) === settled) this.chains.delete(zone);
    });
    return next;
  }
}

function compacted(subscription: ZoneSyncSubscription): ZoneSyncSubscription {
  const { config: _config, ...rest } = subscription;
  return { ...rest, ...(rest.status ? { status: { ...rest.status, stat: undefined } } : {}) } as ZoneSyncSubscription;
}
