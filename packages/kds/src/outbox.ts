// The sending side of one sync direction for one peer: a full sync or a catch-up from the peer's
// cursor, then every change as the store announces it (docs/multizone.md, Sending).
import { randomUUID } from 'node:crypto';
import type { SyncedCopy } from '@mesh/resource-manager';
import type { ResourceChange, ResourceKey, ResourceReader } from '@mesh/store';
import type { Channel } from './channels.js';
import type { Cursor, SyncedKind, SyncMessage } from './protocol.js';

export interface OutboxOptions {
  store: ResourceReader;
  /** The id of the store's history (its cluster id): a cursor of another history means a full sync. */
  storeId: string;
  channel: Channel;
  /** The message limit of this side of sync (its `maxMsgSize`), in bytes: a full sync groups kinds into messages of half of it at most. */
  maxMessageBytes: number;
  /** Hands a message to the peer; resolves once it may send the next one. */
  send: (message: SyncMessage) => Promise<void>;
  /** A send or read failed: the session is over. */
  onError: (error: unknown) => void;
}

const keyId = (key: ResourceKey) => `${key.type}\u0000${key.mesh}\u0000${key.name}`;

/** Changes read from the change log at a time when catching up. */
const CATCH_UP_PAGE = 5000;

/**
 * A bound of a copy's share of a message: the spec travels as JSON text inside JSON, where
 * escaping its quotes at most doubles it, plus its names, labels and creation time.
 */
const boundOfCopy = (copy: SyncedCopy) => 2 * copy.spec.length + 256;

/**
 * Sends a peer what it lacks, then follows the store: changes announced while a message is on
 * its way are sent together in the next one, each kind's part with its own nonce. Every message
 * carries the cursor the peer reaches by applying it, so a peer that reconnects resumes there.
 */
export class SyncOutbox {
  /** Keys to send, each with the revision of its last change. */
  private pending = new Map<string, { key: ResourceKey; revision: number }>();
  private pendingRevision = 0;
  /** Lookups of related keys under way: no message goes out before they are in. */
  private lookups = 0;
  /** The revision of the store the peer has everything up to, once the first sync is out. */
  private sentThrough = -1;
  private flushing = false;
  private scheduled = false;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;
  private readonly kindNames: Set<string>;

  constructor(private readonly options: OutboxOptions) {
    this.kindNames = new Set(options.channel.kinds.map((kind) => kind.name));
  }

  /** Starts from the peer's cursor: a catch-up when the store still has its changes, a full sync otherwise. */
  async start(cursor: Cursor | null): Promise<void> {
    const { store, storeId } = this.options;
    // Listening first: what changes while the first sync is read is sent after it.
    this.unsubscribe = store.onChange((change) => this.noteChange(change));
    const caughtUp = cursor && cursor.store === storeId ? await this.catchUp(cursor.revision) : false;
    if (!caughtUp) await this.sendFull();
    this.scheduleFlush();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
  }

  private noteChange(change: ResourceChange): void {
    if (this.stopped) return;
    const note = (key: ResourceKey) => this.pending.set(keyId(key), { key, revision: change.revision });
    if (this.kindNames.has(change.type)) note(change);
    const related = this.options.channel.related(change);
    if (!related) {
      this.pendingRevision = Math.max(this.pendingRevision, change.revision);
      if (this.kindNames.has(change.type)) this.scheduleFlush();
      return;
    }
    this.lookups += 1;
    related.then(
      (keys) => {
        this.lookups -= 1;
        keys.forEach(note);
        this.pendingRevision = Math.max(this.pendingRevision, change.revision);
        this.scheduleFlush();
      },
      (error: unknown) => this.fail(error),
    );
  }

  /** The changes after the peer's revision, when the store still keeps them. */
  private async catchUp(from: number): Promise<boolean> {
    const { store } = this.options;
    const current = await store.currentRevision();
    if (from > current) return false;
    let revision = from;
    const keys = new Map<string, ResourceKey>();
    while (revision < current) {
      const since = await store.changesSince(revision, CATCH_UP_PAGE);
      if (since.resync) return false;
      if (since.changes.length === 0) break;
      for (const change of since.changes) {
        if (this.kindNames.has(change.type)) keys.set(keyId(change), change);
        for (const key of (await this.options.channel.related(change)) ?? []) keys.set(keyId(key), key);
      }
      revision = since.revision;
    }
    await this.sendChanges([...keys.values()], revision);
    return true;
  }

  /**
   * Everything the peer gets, in the channel's order of kinds: as many kinds a message as fit in
   * half the message limit (a kind larger than that goes alone, whole), so that a peer applies a
   * first sync in few transactions. The cursor rides on the last message.
   */
  private async sendFull(): Promise<void> {
    const { store, storeId, channel, maxMessageBytes } = this.options;
    const revision = await store.currentRevision();
    let parts: SyncedKind[] = [];
    let bound = 0;
    for (const kind of channel.kinds) {
      const resources: SyncedCopy[] = [];
      for (const stored of (await store.list({ type: kind.name, offset: 0, size: 0 })).items) {
        const copy = await channel.outgoing(stored);
        if (copy) resources.push(copy);
      }
      const kindBound = resources.reduce((sum, copy) => sum + boundOfCopy(copy), 0);
      if (parts.length > 0 && bound + kindBound > maxMessageBytes / 2) {
        await this.options.send({ full: true, kinds: parts });
        parts = [];
        bound = 0;
      }
      parts.push({ type: kind.name, nonce: randomUUID(), resources, removed: [] });
      bound += kindBound;
    }
    await this.options.send({ full: true, kinds: parts, cursor: { store: storeId, revision } });
    this.sentThrough = revision;
  }

  /** The current copies (or removals) of these keys, one part per kind. */
  private async sendChanges(keys: ResourceKey[], revision: number): Promise<void> {
    const { store, storeId, channel } = this.options;
    const byKind = new Map<string, SyncedKind>();
    const partOf = (type: string) => {
      let part = byKind.get(type);
      if (!part) byKind.set(type, (part = { type, nonce: randomUUID(), resources: [], removed: [] }));
      return part;
    };
    for (const key of keys) {
      const stored = await store.get(key);
      const copy = stored && (await channel.outgoing(stored));
      if (copy) {
        partOf(key.type).resources.push(copy);
        continue;
      }
      const peerKey = channel.peerKey(key);
      if (peerKey) partOf(key.type).removed.push(peerKey);
    }
    if (byKind.size > 0 || revision > this.sentThrough) {
      await this.options.send({ full: false, kinds: [...byKind.values()], cursor: { store: storeId, revision } });
    }
    this.sentThrough = Math.max(this.sentThrough, revision);
  }

  private scheduleFlush(): void {
    if (this.scheduled || this.flushing || this.stopped || this.sentThrough < 0 || this.lookups > 0) return;
    this.scheduled = true;
    // A burst of changes announced together (a mesh and what it owns) goes in one message.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing || this.stopped) return;
    this.flushing = true;
    try {
      while (!this.stopped && this.pending.size > 0 && this.lookups === 0) {
        // What the first sync already sent at its revision is not sent again.
        const keys = [...this.pending.values()].filter(({ revision }) => revision > this.sentThrough).map(({ key }) => key);
        const revision = this.pendingRevision;
        this.pending = new Map();
        if (keys.length > 0) await this.sendChanges(keys, revision);
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.flushing = false;
    }
  }

  private fail(error: unknown): void {
    if (this.stopped) return;
    this.stop();
    this.options.onError(error);
  }
}
