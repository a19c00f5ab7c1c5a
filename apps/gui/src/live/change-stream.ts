// The page's one connection to the change stream (docs/api.md, Change stream), shared by every
// part of the page that shows data: each watches the kinds it shows and reloads when one of them
// changes. The connection asks for the kinds watched now, resumes with Last-Event-ID after a
// break, and tells watchers to reload everything whenever changes may have been missed (a first
// connection, a `resync`). Its state drives the live indicator.
import { ref, type Ref } from 'vue';
import type { Schemas } from '../api/client.js';
import { SseParser } from './sse.js';

export type ChangeEvent = Schemas['ChangeEvent'] & { kind: 'put' | 'delete' };

/**
 * `live`: connected; `reconnecting`: the connection broke and is being made again; `offline`: it
 * keeps failing; `idle`: the page shows nothing that changes, so it needs no connection.
 */
export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'offline' | 'idle';

export interface Watcher {
  /** The kinds (`Dataplane`, `MeshInsight`, ...) whose changes matter. */
  types: readonly string[];
  /**
   * The one mesh whose changes matter, for watchers of mesh-scoped kinds only. When every watcher
   * names the same mesh the connection asks for it alone: a mesh of many proxies elsewhere then
   * sends the page nothing.
   */
  mesh?: () => string;
  /** A change of one of them. */
  onChange(event: ChangeEvent): void;
  /** Changes may have been missed: reload everything. */
  onResync(): void;
}

export interface ChangeStreamOptions {
  apiUrl: string;
  /** Headers of every request (the Authorization of the signed-in user). */
  headers: () => Record<string, string>;
  fetch?: typeof fetch;
  /** Failed attempts in a row after which the state is `offline` (it keeps trying). */
  failuresBeforeOffline?: number;
  /** The delay before the nth retry, in milliseconds. */
  retryDelayMs?: (attempt: number) => number;
}

const defaultRetryDelay = (attempt: number) => Math.min(15_000, 500 * 2 ** Math.min(attempt, 5));

export class ChangeStream {
  readonly state: Ref<LiveState> = ref('connecting');
  private readonly watchers = new Set<Watcher>();
  private controller: AbortController | undefined;
  private lastEventId = '';
  /** The query of the open connection: the kinds, and the mesh when every watcher names one. */
  private connectedQuery = '';
  private failures = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private stopped = true;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ChangeStreamOptions) {
    this.fetchImpl = options.fetch ?? ((...args) => globalThis.fetch(...args));
  }

  /** Starts watching; the returned function stops. */
  watch(watcher: Watcher): () => void {
    this.watchers.add(watcher);
    this.scheduleReconnect();
    return () => {
      this.watchers.delete(watcher);
      this.scheduleReconnect();
    };
  }

  start(): void {
    this.stopped = false;
    this.scheduleReconnect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.reconnectTimer);
    this.controller?.abort();
    this.controller = undefined;
  }

  /**
   * Holds the connection only while the page is visible: a browser opens at most six HTTP/1.1
   * connections to a host, and a stream in each of six background tabs would leave none for a
   * seventh. A page shown again resumes where it stopped (Last-Event-ID), missing nothing.
   */
  followVisibility(doc: Document): void {
    const apply = () => (doc.visibilityState === 'hidden' ? this.stop() : this.start());
    doc.addEventListener('visibilitychange', apply);
    apply();
  }

  /** Reconnects at once with the current credentials (after signing in or out). */
  restart(): void {
    this.lastEventId = '';
    this.connectedQuery = '';
    this.scheduleReconnect();
  }

  /** Asks again for what the watchers watch now (a watcher's mesh changed). */
  reconsider(): void {
    this.scheduleReconnect();
  }

  /** `type=...&type=...[&mesh=...]`, or '' when nothing is watched. */
  private wantedQuery(): string {
    const watchers = [...this.watchers].filter((watcher) => watcher.types.length > 0);
    const types = [...new Set(watchers.flatMap((watcher) => watcher.types))].sort();
    if (types.length === 0) return '';
    const meshes = new Set(watchers.map((watcher) => watcher.mesh?.()));
    const [mesh] = meshes;
    const query = new URLSearchParams(types.map((type) => ['type', type]));
    if (meshes.size === 1 && mesh !== undefined) query.set('mesh', mesh);
    return query.toString();
  }

  /** The kinds watched settle within a tick of a navigation: one reconnection for all of them. */
  private scheduleReconnect(): void {
    if (this.stopped) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      const wanted = this.wantedQuery();
      if (this.controller && wanted === this.connectedQuery) return;
      this.connect(wanted);
    }, 0);
  }

  private connect(query: string): void {
    clearTimeout(this.retryTimer);
    this.controller?.abort();
    this.connectedQuery = query;
    if (query === '') {
      this.controller = undefined;
      this.state.value = 'idle';
      return;
    }
    if (this.state.value === 'idle') this.state.value = 'connecting';
    const controller = new AbortController();
    this.controller = controller;
    this.read(query, controller).then(
      () => this.broken(controller),
      (error: unknown) => {
        if (!controller.signal.aborted) console.warn('change stream:', error);
        this.broken(controller);
      },
    );
  }

  private async read(query: string, controller: AbortController): Promise<void> {
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...this.options.headers() };
    const resuming = this.lastEventId !== '';
    if (resuming) headers['Last-Event-ID'] = this.lastEventId;
    const response = await this.fetchImpl(`${this.options.apiUrl}/events?${query}`, { headers, signal: controller.signal, cache: 'no-store' });
    if (!response.ok || !response.body) throw new Error(`the change stream answered ${response.status}`);
    this.failures = 0;
    this.state.value = 'live';
    // Without a revision to resume from, what changed before the stream opened is not in it.
    if (!resuming) this.resyncAll();
    const parser = new SseParser((event) => {
      if (event.lastEventId !== '') this.lastEventId = event.lastEventId;
      if (event.event === 'resync') {
        this.resyncAll();
        return;
      }
      if (event.event !== 'put' && event.event !== 'delete') return;
      const change = { ...(JSON.parse(event.data) as Schemas['ChangeEvent']), kind: event.event } as ChangeEvent;
      for (const watcher of [...this.watchers]) if (watcher.types.includes(change.type)) watcher.onChange(change);
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parser.push(value);
    }
  }

  private resyncAll(): void {
    for (const watcher of [...this.watchers]) watcher.onResync();
  }

  /** The connection ended: unless it was replaced or stopped, try again after a while. */
  private broken(controller: AbortController): void {
    if (this.controller !== controller || controller.signal.aborted || this.stopped) return;
    this.controller = undefined;
    this.failures += 1;
    this.state.value = this.failures >= (this.options.failuresBeforeOffline ?? 3) ? 'offline' : 'reconnecting';
    const delay = (this.options.retryDelayMs ?? defaultRetryDelay)(this.failures);
    this.retryTimer = setTimeout(() => this.connect(this.wantedQuery()), delay);
  }
}
