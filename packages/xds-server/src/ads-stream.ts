// One state-of-the-world ADS stream (docs/xds.md, Versions and nonces). Per resource type the
// stream remembers the last response (version, nonce, names) and whether the proxy waits for an
// answer: a request whose nonce is the last one sent is an ACK, or a NACK when it carries an
// error; a request with an older nonce is stale and ignored. A waiting proxy gets a response when
// the type's version moved, when it names other resources, or on its first request of the type;
// a rejected version is not sent again (the proxy keeps what it had until the next change).
import type { DiscoveryResponse, EncodedResource } from './wire.js';
import { type Selection, SEND_ORDER, sentOnlyWhenNamed, type Snapshot, TYPE_URLS } from './snapshot.js';

/** A decoded envoy.service.discovery.v3.DiscoveryRequest (proto field names; src/wire.ts reads it). */
export interface DiscoveryRequest {
  version_info?: string;
  /** The node's id, whenever the request carries a node. */
  node_id?: string;
  node?: Record<string, unknown>;
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
  error_detail?: { code?: number; message?: string };
}

interface TypeState {
  /** The names as the last request listed them: an ACK mostly repeats them. */
  requestedNames: readonly string[];
  /** Names the proxy asked for, distinct and sorted; empty asks for all (listeners and clusters only). */
  names: readonly string[];
  /** The names, each after a NUL: the selection they make of a snapshot (no name and one empty name differ). */
  namesKey: string;
  waiting: boolean;
  lastNonce: string | undefined;
  lastVersion: string | undefined;
  lastNames: string;
  /** No response before this time: a NACK's back-off. */
  holdUntil: number;
  lastSentAt: Date | undefined;
  /** The configuration the last response was taken from. */
  lastSentFrom: Snapshot | undefined;
}

/** What a stream reports as it goes, for the insight. */
export interface StreamEvents {
  responseSent(typeUrl: string): void;
  /** The proxy answered the last response of a type, `deliveryMs` after it went out. */
  responseAnswered(typeUrl: string, rejected: boolean, version: string, error: string | undefined, deliveryMs: number | undefined): void;
}

export interface SentResources {
  readonly version: string;
  readonly names: readonly string[];
  readonly at: Date;
  /** The snapshot the response was taken from. */
  readonly from: Snapshot;
}

/** What a stream keeps per resource type, in one variant of the protocol: state of the world here, incremental in src/delta-stream.ts. */
export interface TypeStates<Request> {
  /**
   * Takes a request of the stream; false when it changes nothing (a stale one). `receivedAt`: when
   * it arrived (ms), for one that waited before being taken; the delivery time is measured to it.
   */
  takeRequest(request: Request, receivedAt?: number): boolean;
  /** Sends what the snapshot holds that the proxy waits for and has not been sent. */
  respond(snapshot: Snapshot | undefined): void;
  /** The names the proxy asked for of a type, distinct and sorted (a gRPC client names its listeners). */
  namesOf(typeUrl: string): readonly string[];
  /** Per type, what the proxy was sent last, for `/xds` of a connected proxy. */
  sent(): ReadonlyMap<string, SentResources>;
  close(): void;
}

/** Types a stream keeps state for: the five served, and room for the ones a proxy asks for in vain. */
const MAX_TYPES = 16;

export class AdsTypeStates implements TypeStates<DiscoveryRequest> {
  private readonly types = new Map<string, TypeState>();
  /** Whether a proxy asked for types beyond SEND_ORDER (answered after those). */
  private otherTypes = false;
  private nonce = 0;
  private timer: NodeJS.Timeout | undefined;
  private latest: Snapshot | undefined;
  /**
   * The snapshot of the last answer that left nothing waiting to be sent. Until it changes, a plain
   * ACK (same names, no error) has nothing to answer: a push brings one per type and proxy.
   */
  private settledOn: Snapshot | undefined;

  constructor(
    private readonly write: (response: DiscoveryResponse) => void,
    private readonly events: StreamEvents,
    private readonly nackBackoffMs: number,
    private readonly now: () => Date,
  ) {}

  /**
   * Takes a request of the stream. Returns false for a stale one (answering a response that is no
   * longer the last), which changes nothing.
   */
  takeRequest(request: DiscoveryRequest, receivedAt?: number): boolean {
    const typeUrl = request.type_url ?? '';
    let state = this.types.get(typeUrl);
    if (!state) {
      // A proxy asks for a handful of types; one naming ever more keeps no more state for them.
      if (this.types.size >= MAX_TYPES) return false;
      if (!SEND_ORDER.includes(typeUrl)) this.otherTypes = true;
      state = {
        requestedNames: [],
        names: [],
        namesKey: '',
        waiting: false,
        lastNonce: undefined,
        lastVersion: undefined,
        lastNames: '',
        holdUntil: 0,
        lastSentAt: undefined,
        lastSentFrom: undefined,
      };
      this.types.set(typeUrl, state);
    }
    const nonce = request.response_nonce ?? '';
    if (nonce !== '' && nonce !== state.lastNonce) return false;
    // Anything but a plain ACK may have something to answer.
    let plainAck = nonce !== '';
    if (nonce !== '') {
      const error = request.error_detail?.message ?? (request.error_detail ? `code ${request.error_detail.code ?? 0}` : undefined);
      const rejected = request.error_detail !== undefined && request.error_detail !== null;
      const now = receivedAt ?? this.now().getTime();
      const deliveryMs = state.lastSentAt ? now - state.lastSentAt.getTime() : undefined;
      this.events.responseAnswered(typeUrl, rejected, request.version_info ?? '', error, deliveryMs);
      if (rejected) {
        state.holdUntil = now + this.nackBackoffMs;
        plainAck = false;
      }
    }
    const requested = request.resource_names ?? [];
    if (!sameList(requested, state.requestedNames)) {
      state.requestedNames = requested;
      state.names = [...new Set(requested)].sort();
      state.namesKey = state.names.map((name) => `\u0000${name}`).join('');
      plainAck = false;
    }
    if (!plainAck) this.settledOn = undefined;
    state.waiting = true;
    return true;
  }

  /**
   * Answers every waiting type the snapshot has news for, in the order Envoy needs them. News of a
   * type that cannot go yet (its last response unanswered, or a NACK's back-off) holds back the
   * types after it: listeners never arrive before the clusters they name.
   */
  respond(snapshot: Snapshot | undefined): void {
    if (!snapshot || snapshot === this.settledOn) return;
    this.latest = snapshot;
    for (const typeUrl of SEND_ORDER) {
      const state = this.types.get(typeUrl);
      if (!state) continue;
      const selection = selectionOf(typeUrl, snapshot, state);
      this.respondType(typeUrl, state, snapshot, selection);
      if (hasUnsentNews(state, selection)) {
        this.settledOn = undefined;
        return;
      }
    }
    if (this.otherTypes) {
      for (const [typeUrl, state] of this.types) {
        if (!SEND_ORDER.includes(typeUrl)) this.respondType(typeUrl, state, snapshot, selectionOf(typeUrl, snapshot, state));
      }
    }
    this.settledOn = snapshot;
  }

  namesOf(typeUrl: string): readonly string[] {
    return this.types.get(typeUrl)?.names ?? [];
  }

  /** The version and names last sent of each type, for `/xds` of a connected proxy. */
  sent(): ReadonlyMap<string, SentResources> {
    const sent = new Map<string, SentResources>();
    for (const [typeUrl, state] of this.types) {
      if (state.lastVersion !== undefined && state.lastSentAt && state.lastSentFrom) {
        const names = state.lastNames === '' ? [] : state.lastNames.split('\u0000');
        sent.set(typeUrl, { version: state.lastVersion, names, at: state.lastSentAt, from: state.lastSentFrom });
      }
    }
    return sent;
  }

  close(): void {
    clearTimeout(this.timer);
  }

  private respondType(typeUrl: string, state: TypeState, snapshot: Snapshot, selection: Selection): void {
    if (!state.waiting) return;
    const { version, resources, names } = selection;
    if (state.lastNonce !== undefined && version === state.lastVersion && names === state.lastNames) return;
    const now = this.now();
    if (state.holdUntil > now.getTime()) {
      this.retryAt(state.holdUntil);
      return;
    }
    const nonce = String(++this.nonce);
    this.write({ versionInfo: version, resources, typeUrl, nonce });
    state.lastNonce = nonce;
    state.lastVersion = version;
    state.lastNames = names;
    state.lastSentAt = now;
    state.lastSentFrom = snapshot;
    state.waiting = false;
    this.events.responseSent(typeUrl);
  }

  private retryAt(at: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.settledOn = undefined;
      this.respond(this.latest);
    }, Math.max(0, at - this.now().getTime()));
    this.timer.unref();
  }
}

const NOTHING: Selection = { version: '', resources: [], names: '' };

/** What a type's response would carry now: what the names asked select of the snapshot (kept with the type snapshot). */
function selectionOf(typeUrl: string, snapshot: Snapshot, state: TypeState): Selection {
  const typeSnapshot = snapshot.types.get(typeUrl);
  if (!typeSnapshot) return NOTHING;
  const last = typeSnapshot.lastSelection;
  if (last && last.by === state.namesKey) return last.selection;
  const resources = selectResources(typeUrl, typeSnapshot.resources, state.names);
  const selection = { version: typeSnapshot.version, resources, names: resources.map((resource) => resource.name).join('\u0000') };
  typeSnapshot.lastSelection = { by: state.namesKey, selection };
  return selection;
}

/** Whether two lists hold the same items in the same order. */
function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether the type has been sent before and the selection holds a version or names not sent yet. */
const hasUnsentNews = (state: TypeState, selection: Selection): boolean =>
  state.lastNonce !== undefined && (selection.version !== state.lastVersion || selection.names !== state.lastNames);

/** Listeners and clusters: all unless names are given; endpoints and secrets: only those named. */
function selectResources(typeUrl: string, resources: ReadonlyMap<string, EncodedResource> | undefined, names: readonly string[]): EncodedResource[] {
  if (!resources) return [];
  if (names.length === 0) return sentOnlyWhenNamed(typeUrl) ? [] : [...resources.values()];
  return names.flatMap((name) => {
    const resource = resources.get(name);
    return resource ? [resource] : [];
  });
}

export { TYPE_URLS };
