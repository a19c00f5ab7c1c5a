// The change stream's source (docs/api.md, Change stream): every committed change of the store, with
// the resource it left, and the mesh and service insights it altered, as one group per revision,
// in revision order. Recent groups are kept so a client that reconnects resumes where it stopped.
import type { InsightAggregator, InsightChange } from '@mesh/insights';
import { findKind } from '@mesh/model';
import type { ResourceChange, ResourceReader, StoredResource } from '@mesh/store';
import { ChangeEvent, insightEvent, type ChangeGroup } from './event.js';
import type { EventStream, FlushScheduler } from './stream.js';

export interface ChangeStreamOptions {
  /** Events kept for clients that resume; one asking from before them gets `resync`. */
  retainedEvents: number;
  /** How often an idle stream gets a comment line, so proxies and load balancers keep it open. */
  keepAliveMs: number;
  /** What a stream may hold unsent before the client is told to `resync` and the stream ends. */
  maxBufferedBytes: number;
}

/**
 * The share of the event loop that writing to streams may take under load: with flushes taking t
 * (a moving average), one is followed by the next no sooner than t × (1 / share − 1), so many
 * watchers delay delivery a little instead of taking the time writes and reads need.
 */
const FLUSH_SHARE = 0.5;
/** How much the last flush moves the average. */
const FLUSH_AVERAGE_WEIGHT = 0.2;
/** However long flushes take, the next one waits no longer than this. */
const MAX_FLUSH_INTERVAL_MS = 100;

export const DEFAULT_CHANGE_STREAM_OPTIONS: ChangeStreamOptions = { retainedEvents: 10_000, keepAliveMs: 15_000, maxBufferedBytes: 1024 * 1024 };

/** Where a new stream starts: after a revision the client saw, and with the current state or not. */
export interface StreamStart {
  since?: number;
  initial: boolean;
}

/**
 * Fans the changes out to the open streams. A group is published once the insight aggregator has
 * applied its change, so the insights it altered travel with it and a stream never shows a
 * resource ahead of the insights it feeds.
 */
export class ChangeHub implements FlushScheduler {
  private readonly options: ChangeStreamOptions;
  /** Streams with events queued for the next flush. */
  private queuedStreams: EventStream[] = [];
  private flushScheduled = false;
  /** When the last flush ended, in ms of `performance.now()`, and how long flushes take. */
  private lastFlushEnd = 0;
  private flushDuration = 0;
  /** The revision of the last group published. */
  private revision = 0;
  /** The kept groups hold every event after this revision. */
  private keptAfter = 0;
  private readonly kept: ChangeGroup[] = [];
  private keptEvents = 0;
  /** Changes announced by the store whose insights are not applied yet, with the resource each left. */
  private readonly pending = new Map<number, StoredResource | undefined>();
  private readonly streams = new Set<EventStream>();
  /** Snapshots waiting for a moment when every announced change is published. */
  private idleWaiters: Array<() => void> = [];
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly unsubscribe: Array<() => void> = [];
  private ready: Promise<void> | undefined;
  /** Whether a group was published: then the revision is known from it. */
  private published = false;

  constructor(
    private readonly reader: ResourceReader,
    private readonly insights: InsightAggregator,
    options: Partial<ChangeStreamOptions> = {},
  ) {
    this.options = { ...DEFAULT_CHANGE_STREAM_OPTIONS, ...options };
  }

  /** Listens from the first stream on: a control plane nobody watches keeps nothing. */
  private listen(): Promise<void> {
    // Once the insights hold the store (they load while a control plane starts), so that the
    // first snapshot and every change after it carry them.
    this.ready ??= this.insights.settled().then(() => {
      this.unsubscribe.push(
        this.reader.onChange((change, resource) => this.pending.set(change.revision, resource)),
        this.insights.onApplied((change, altered) => this.publish(change, altered)),
      );
      return this.reader.currentRevision().then((revision) => {
        if (this.published) return;
        this.revision = revision;
        this.keptAfter = revision;
      });
    });
    return this.ready;
  }

  /** The streams open now. */
  get size(): number {
    return this.streams.size;
  }

  /** What a stream may hold unsent. */
  get maxBufferedBytes(): number {
    return this.options.maxBufferedBytes;
  }

  /**
   * Opens a stream on `res`: from a revision still kept, the groups after it, then what comes;
   * from one no longer kept, `resync` first; with `initial`, the current state (`snapshot`, read
   * at a moment when every change announced is published) and `synced` before what comes.
   */
  async open(stream: EventStream, start: StreamStart, snapshot: (revision: number) => Promise<ChangeEvent[]>): Promise<void> {
    await this.listen();
    stream.onEnd(() => this.remove(stream));
    if (stream.ended) return;
    stream.begin();
    if (start.since !== undefined) {
      if (start.since >= this.keptAfter && start.since <= this.revision) {
        for (const group of this.kept) if (group.revision > start.since) stream.deliver(group, this.revision);
        this.add(stream);
        return;
      }
      stream.resync(this.revision, false);
    }
    if (!start.initial) {
      this.add(stream);
      return;
    }
    this.atIdle(() => {
      // Changes from here on wait behind the current state.
      stream.hold();
      this.add(stream);
      const revision = this.revision;
      snapshot(revision)
        .then((events) => stream.sendInitial(events, revision))
        .catch(() => stream.end());
    });
  }

  /**
   * Schedules a flush: at once (after the changes of this turn of the event loop) when the last one
   * is far enough behind, else once it is. Idle streams so get each change at once, and busy ones
   * get the changes of a few tens of milliseconds in one write each.
   */
  queued(stream: EventStream): void {
    this.queuedStreams.push(stream);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    const interval = Math.min(MAX_FLUSH_INTERVAL_MS, (this.flushDuration * (1 - FLUSH_SHARE)) / FLUSH_SHARE);
    const wait = this.lastFlushEnd + interval - performance.now();
    if (wait <= 0) setImmediate(this.flush);
    else setTimeout(this.flush, wait);
  }

  private readonly flush = (): void => {
    const started = performance.now();
    const streams = this.queuedStreams;
    this.queuedStreams = [];
    this.flushScheduled = false;
    for (const stream of streams) stream.flush();
    // A response hands its bytes to the socket on the next tick: the flush ends once they all are.
    process.nextTick(() => {
      this.lastFlushEnd = performance.now();
      this.flushDuration += (this.lastFlushEnd - started - this.flushDuration) * FLUSH_AVERAGE_WEIGHT;
    });
  };

  /** Ends every stream and stops listening. */
  close(): void {
    for (const stop of this.unsubscribe) stop();
    for (const stream of [...this.streams]) stream.end();
    this.idleWaiters = [];
  }

  private add(stream: EventStream): void {
    if (stream.ended) return;
    this.streams.add(stream);
    this.keepAlive ??= setInterval(() => {
      for (const open of this.streams) open.comment();
    }, this.options.keepAliveMs).unref();
  }

  private remove(stream: EventStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0 && this.keepAlive) {
      clearInterval(this.keepAlive);
      this.keepAlive = undefined;
    }
  }

  /** Runs `task` now if every announced change is published, or as soon as one is. */
  private atIdle(task: () => void): void {
    if (this.pending.size === 0) task();
    else this.idleWaiters.push(task);
  }

  private publish(change: ResourceChange, altered: readonly InsightChange[]): void {
    const resource = this.pending.get(change.revision);
    this.pending.delete(change.revision);
    const events: ChangeEvent[] = [];
    const kind = findKind(change.type);
    // A change whose resource is gone again before it was announced has its delete to follow.
    if (kind && (change.operation === 'delete' || resource)) events.push(new ChangeEvent(change.revision, kind, change.mesh, change.name, change.operation === 'delete' ? undefined : resource));
    for (const insight of altered) events.push(insightEvent(change.revision, insight));
    if (!this.published) {
      this.published = true;
      this.keptAfter = change.revision - 1;
    }
    this.revision = Math.max(this.revision, change.revision);
    if (events.length > 0) {
      const group: ChangeGroup = { revision: change.revision, events };
      this.keep(group);
      for (const stream of this.streams) stream.deliver(group, this.revision);
    }
    if (this.pending.size === 0 && this.idleWaiters.length > 0) {
      const waiting = this.idleWaiters;
      this.idleWaiters = [];
      for (const task of waiting) task();
    }
  }

  private keep(group: ChangeGroup): void {
    this.kept.push(group);
    this.keptEvents += group.events.length;
    while (this.keptEvents > this.options.retainedEvents && this.kept.length > 1) {
      const dropped = this.kept.shift()!;
      this.keptEvents -= dropped.events.length;
      this.keptAfter = dropped.revision;
    }
  }
}
