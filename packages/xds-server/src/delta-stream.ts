// One incremental (delta) ADS stream (docs/xds.md, Incremental xDS). Per resource type the stream
// knows what the proxy subscribed to (every resource of the type for a wildcard subscription,
// listeners and clusters by default) and which version of each resource it holds once it accepts
// what was sent; a response carries only the resources that are new or changed for it and the
// names of those gone. One response per type is outstanding at a time; a NACK takes the proxy
// back to the versions it had, and the rejected ones are not sent again.
import type { SentResources, StreamEvents, TypeStates } from './ads-stream.js';
import { SEND_ORDER, sentOnlyWhenNamed, type Snapshot, TYPE_URLS } from './snapshot.js';
import type { DeltaDiscoveryResponse, EncodedResource, VersionedResource } from './wire.js';

/** A decoded envoy.service.discovery.v3.DeltaDiscoveryRequest (proto field names; src/wire.ts reads it). */
export interface DeltaDiscoveryRequest {
  node_id?: string;
  node?: Record<string, unknown>;
  type_url?: string;
  resource_names_subscribe?: readonly string[];
  resource_names_unsubscribe?: readonly string[];
  initial_resource_versions?: ReadonlyMap<string, string>;
  response_nonce?: string;
  error_detail?: { code?: number; message?: string };
}

/** The name subscribing to every resource of a type. */
const WILDCARD = '*';

interface Outstanding {
  readonly nonce: string;
  readonly updated: readonly VersionedResource[];
  /** The versions the proxy held before this response: what a NACK leaves it with. */
  readonly before: Map<string, string>;
}

interface DeltaTypeState {
  wildcard: boolean;
  readonly subscribed: Set<string>;
  /** The version of each resource the proxy holds by name, once it accepts the outstanding response. */
  held: Map<string, string>;
  /** Versions the proxy rejected, by name: not sent again. */
  readonly rejected: Map<string, string>;
  /** The response awaiting the proxy's answer. */
  outstanding: Outstanding | undefined;
  /** The proxy subscribed and was not answered yet: the next response goes even when empty. */
  unanswered: boolean;
  /** No response before this time: a NACK's back-off. */
  holdUntil: number;
  lastSentAt: Date | undefined;
  lastVersion: string | undefined;
  lastSentFrom: Snapshot | undefined;
}

interface Changes {
  readonly updated: VersionedResource[];
  readonly removed: string[];
}

/** Types a stream keeps state for: the five served, and room for the ones a proxy asks for in vain. */
const MAX_TYPES = 16;

const NO_RESOURCES: ReadonlyMap<string, EncodedResource> = new Map();

export class DeltaTypeStates implements TypeStates<DeltaDiscoveryRequest> {
  private readonly types = new Map<string, DeltaTypeState>();
  private nonce = 0;
  private timer: NodeJS.Timeout | undefined;
  private latest: Snapshot | undefined;

  constructor(
    private readonly write: (response: DeltaDiscoveryResponse) => void,
    private readonly events: StreamEvents,
    private readonly nackBackoffMs: number,
    private readonly now: () => Date,
  ) {}

  /**
   * Takes a request: the answer to the outstanding response of its type (a stale nonce answers
   * nothing), and changes of subscription, which count whatever the nonce.
   */
  takeRequest(request: DeltaDiscoveryRequest, receivedAt?: number): boolean {
    const typeUrl = request.type_url ?? '';
    let state = this.types.get(typeUrl);
    const subscribe = request.resource_names_subscribe ?? [];
    if (!state) {
      if (this.types.size >= MAX_TYPES) return false;
      state = {
        // Listeners and clusters: a first request naming nothing subscribes to all of them.
        wildcard: subscribe.includes(WILDCARD) || (subscribe.length === 0 && !sentOnlyWhenNamed(typeUrl)),
        subscribed: new Set(),
        held: new Map(request.initial_resource_versions ?? []),
        rejected: new Map(),
        outstanding: undefined,
        unanswered: true,
        holdUntil: 0,
        lastSentAt: undefined,
        lastVersion: undefined,
        lastSentFrom: undefined,
      };
      this.types.set(typeUrl, state);
    }
    const nonce = request.response_nonce ?? '';
    const outstanding = state.outstanding;
    if (nonce !== '' && outstanding?.nonce === nonce) {
      const rejected = request.error_detail !== undefined && request.error_detail !== null;
      const error = request.error_detail?.message ?? (rejected ? `code ${request.error_detail?.code ?? 0}` : undefined);
      const deliveryMs = state.lastSentAt ? (receivedAt ?? this.now().getTime()) - state.lastSentAt.getTime() : undefined;
      this.events.responseAnswered(typeUrl, rejected, state.lastVersion ?? '', error, deliveryMs);
      state.outstanding = undefined;
      if (rejected) {
        state.held = outstanding.before;
        for (const { resource, version } of outstanding.updated) state.rejected.set(resource.name, version);
        state.holdUntil = this.now().getTime() + this.nackBackoffMs;
      }
    }
    for (const name of subscribe) {
      if (name === WILDCARD) state.wildcard = true;
      else if (!state.subscribed.has(name)) {
        state.subscribed.add(name);
        state.unanswered = true;
      }
    }
    // The proxy forgets what it unsubscribes from (sent again if it subscribes again); under a
    // wildcard subscription a resource stays until the wildcard goes.
    for (const name of request.resource_names_unsubscribe ?? []) {
      const forget = (held: string) => {
        state.held.delete(held);
        state.outstanding?.before.delete(held);
      };
      if (name === WILDCARD) {
        state.wildcard = false;
        for (const held of [...state.held.keys()]) if (!state.subscribed.has(held)) forget(held);
      } else {
        state.subscribed.delete(name);
        if (!state.wildcard) forget(name);
      }
    }
    return true;
  }

  /**
   * Sends each type's changes, in the order Envoy needs them: changes of clusters that cannot go
   * yet (a response outstanding, or a NACK's back-off) hold back the listeners. Endpoints and
   * secrets go whenever they can: the proxy subscribes to them by name, once it needs them (a
   * cluster warming waits for its endpoints, and Envoy answers the clusters only once it is warm).
   */
  respond(snapshot: Snapshot | undefined): void {
    if (!snapshot) return;
    this.latest = snapshot;
    let holding = false;
    for (const typeUrl of SEND_ORDER) {
      const state = this.types.get(typeUrl);
      const named = sentOnlyWhenNamed(typeUrl);
      if (!state || (holding && !named)) continue;
      if (!this.respondType(typeUrl, state, snapshot) && !named) holding = true;
    }
    if (holding) return;
    for (const [typeUrl, state] of this.types) if (!SEND_ORDER.includes(typeUrl)) this.respondType(typeUrl, state, snapshot);
  }

  namesOf(typeUrl: string): readonly string[] {
    return [...(this.types.get(typeUrl)?.subscribed ?? [])].sort();
  }

  /** Per type, the resources the proxy holds, from the snapshot of the last response. */
  sent(): ReadonlyMap<string, SentResources> {
    const sent = new Map<string, SentResources>();
    for (const [typeUrl, state] of this.types) {
      if (state.lastVersion !== undefined && state.lastSentAt && state.lastSentFrom) {
        sent.set(typeUrl, { version: state.lastVersion, names: [...state.held.keys()], at: state.lastSentAt, from: state.lastSentFrom });
      }
    }
    return sent;
  }

  close(): void {
    clearTimeout(this.timer);
  }

  /** Sends the type's changes when it can; false when it has changes that must wait. */
  private respondType(typeUrl: string, state: DeltaTypeState, snapshot: Snapshot): boolean {
    const changes = changesOf(typeUrl, state, snapshot);
    const news = changes.updated.length > 0 || changes.removed.length > 0;
    if (!news && !state.unanswered) return true;
    if (state.outstanding) return !news;
    const now = this.now().getTime();
    if (state.holdUntil > now) {
      this.retryAt(state.holdUntil);
      return false;
    }
    const nonce = String(++this.nonce);
    const systemVersionInfo = snapshot.types.get(typeUrl)?.version ?? '';
    this.write({ systemVersionInfo, resources: changes.updated, removed: changes.removed, typeUrl, nonce });
    state.outstanding = { nonce, updated: changes.updated, before: new Map(state.held) };
    for (const { resource, version } of changes.updated) state.held.set(resource.name, version);
    for (const name of changes.removed) state.held.delete(name);
    state.unanswered = false;
    state.lastSentAt = this.now();
    state.lastVersion = systemVersionInfo;
    state.lastSentFrom = snapshot;
    this.events.responseSent(typeUrl);
    return true;
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

/**
 * A resource's version as the stream tells it: the digest of its encoding. A changed cluster stays
 * warming in Envoy until its endpoints follow it, so an assignment's version carries its cluster's.
 */
function versionOf(typeUrl: string, resource: EncodedResource, snapshot: Snapshot): string {
  if (typeUrl !== TYPE_URLS.endpoints) return resource.digest;
  const cluster = snapshot.types.get(TYPE_URLS.cluster)?.resources.get(resource.name);
  return cluster ? `${resource.digest}.${cluster.digest.slice(0, 8)}` : resource.digest;
}

/** What the proxy lacks of its subscription to a type: resources new or changed for it, and names gone. */
function changesOf(typeUrl: string, state: DeltaTypeState, snapshot: Snapshot): Changes {
  const resources = snapshot.types.get(typeUrl)?.resources ?? NO_RESOURCES;
  const updated: VersionedResource[] = [];
  const consider = (resource: EncodedResource) => {
    const version = versionOf(typeUrl, resource, snapshot);
    if (state.held.get(resource.name) !== version && state.rejected.get(resource.name) !== version) updated.push({ version, resource });
  };
  if (state.wildcard) {
    for (const resource of resources.values()) consider(resource);
  } else {
    for (const name of state.subscribed) {
      const resource = resources.get(name);
      if (resource) consider(resource);
    }
  }
  const removed: string[] = [];
  for (const name of state.held.keys()) if (!resources.has(name)) removed.push(name);
  return { updated, removed };
}
