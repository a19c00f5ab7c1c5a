// One state-of-the-world ADS stream (docs/xds.md, Versions and nonces). Per resource type the
// stream remembers the last response (version, nonce, names) and whether the proxy waits for an
// answer: a request whose nonce is the last one sent is an ACK, or a NACK when it carries an
// error; a request with an older nonce is stale and ignored. A waiting proxy gets a response when
// the type's version moved, when it names other resources, or on its first request of the type;
// a rejected version is not sent again (the proxy keeps what it had until the next change).
import type { EncodedResource } from './wire.js';
import { encodeDiscoveryResponse } from './wire.js';
import { SEND_ORDER, sentOnlyWhenNamed, type Snapshot, TYPE_URLS } from './snapshot.js';

/** A decoded envoy.service.discovery.v3.DiscoveryRequest (proto field names). */
export interface DiscoveryRequest {
  version_info?: string;
  node?: Record<string, unknown>;
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
  error_detail?: { code?: number; message?: string };
}

interface TypeState {
  /** Names the proxy asked for; empty asks for all (listeners and clusters only). */
  names: readonly string[];
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
  responseAnswered(typeUrl: string, rejected: boolean, version: string, error: string | undefined): void;
}

export interface SentResources {
  readonly version: string;
  readonly names: readonly string[];
  readonly at: Date;
  /** The snapshot the response was taken from. */
  readonly from: Snapshot;
}

export class AdsTypeStates {
  private readonly types = new Map<string, TypeState>();
  private nonce = 0;
  private timer: NodeJS.Timeout | undefined;
  private latest: Snapshot | undefined;

  constructor(
    private readonly write: (message: Buffer) => void,
    private readonly events: StreamEvents,
    private readonly nackBackoffMs: number,
    private readonly now: () => Date,
  ) {}

  /**
   * Takes a request of the stream. Returns false for a stale one (answering a response that is no
   * longer the last), which changes nothing.
   */
  takeRequest(request: DiscoveryRequest): boolean {
    const typeUrl = request.type_url ?? '';
    let state = this.types.get(typeUrl);
    if (!state) {
      state = {
        names: [],
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
    if (nonce !== '') {
      const error = request.error_detail?.message ?? (request.error_detail ? `code ${request.error_detail.code ?? 0}` : undefined);
      const rejected = request.error_detail !== undefined && request.error_detail !== null;
      this.events.responseAnswered(typeUrl, rejected, request.version_info ?? '', error);
      if (rejected) state.holdUntil = this.now().getTime() + this.nackBackoffMs;
    }
    state.names = [...new Set(request.resource_names ?? [])].sort();
    state.waiting = true;
    return true;
  }

  /**
   * Answers every waiting type the snapshot has news for, in the order Envoy needs them. News of a
   * type that cannot go yet (its last response unanswered, or a NACK's back-off) holds back the
   * types after it: listeners never arrive before the clusters they name.
   */
  respond(snapshot: Snapshot | undefined): void {
    if (!snapshot) return;
    this.latest = snapshot;
    const typeUrls = [...SEND_ORDER, ...[...this.types.keys()].filter((typeUrl) => !SEND_ORDER.includes(typeUrl))];
    for (const typeUrl of typeUrls) {
      this.respondType(typeUrl, snapshot);
      if (SEND_ORDER.includes(typeUrl) && this.hasUnsentNews(typeUrl, snapshot)) return;
    }
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

  /** Whether the snapshot holds a version of the type the proxy asked for and has not been sent. */
  private hasUnsentNews(typeUrl: string, snapshot: Snapshot): boolean {
    const state = this.types.get(typeUrl);
    if (!state || state.lastNonce === undefined) return false;
    const typeSnapshot = snapshot.types.get(typeUrl);
    const names = selectResources(typeUrl, typeSnapshot?.resources, state.names)
      .map((resource) => resource.name)
      .join('\u0000');
    return (typeSnapshot?.version ?? '') !== state.lastVersion || names !== state.lastNames;
  }

  private respondType(typeUrl: string, snapshot: Snapshot): void {
    const state = this.types.get(typeUrl);
    if (!state?.waiting) return;
    const now = this.now().getTime();
    if (state.holdUntil > now) {
      this.retryAt(state.holdUntil);
      return;
    }
    const typeSnapshot = snapshot.types.get(typeUrl);
    const version = typeSnapshot?.version ?? '';
    const resources = selectResources(typeUrl, typeSnapshot?.resources, state.names);
    const names = resources.map((resource) => resource.name).join('\u0000');
    if (state.lastNonce !== undefined && version === state.lastVersion && names === state.lastNames) return;
    const nonce = String(++this.nonce);
    this.write(encodeDiscoveryResponse({ versionInfo: version, resources, typeUrl, nonce }));
    state.lastNonce = nonce;
    state.lastVersion = version;
    state.lastNames = names;
    state.lastSentAt = this.now();
    state.lastSentFrom = snapshot;
    state.waiting = false;
    this.events.responseSent(typeUrl);
  }

  private retryAt(at: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.respond(this.latest);
    }, Math.max(0, at - this.now().getTime()));
    this.timer.unref();
  }
}

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
