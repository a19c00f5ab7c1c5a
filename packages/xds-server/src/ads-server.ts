// The aggregated discovery service (docs/xds.md): each stream identifies its proxy from the first
// request's node, authenticates it, registers the proxy resource it brought (self-registration),
// follows its configuration and answers its requests; its subscription goes into the proxy's
// insight. Streams of the same proxy are tracked so the admin views and the deregistration after
// a disconnect know whether it is still here.
import { status } from '@grpc/grpc-js';
import { decodeSpec, DomainError, getKind, type DataplaneSpec } from '@mesh/model';
import type { ProxyConfigService } from '@mesh/proxy-config';
import type { ResourceManager } from '@mesh/resource-manager';
import type { ResourceReader } from '@mesh/store';
import { scalarText } from '@mesh/xds-renderer';
import { AdsTypeStates, type DiscoveryRequest, type SentResources, type StreamEvents, type TypeStates } from './ads-stream.js';
import { type DeltaDiscoveryRequest, DeltaTypeStates } from './delta-stream.js';
import { type Authenticator, credentialOf } from './auth.js';
import { insightKindOf, type InsightWriter, Subscription } from './insights.js';
import { METADATA, proxyNodeOf, type ProxyNode, proxyVersionOf, RESOURCE_TYPE_OF, StreamRefusal, stringMetadata } from './proxy-node.js';
import { RefreshQueue } from './refresh-queue.js';
import { registeredSpec } from './registration.js';
import { ProxySession } from './session.js';
import type { Snapshot } from './snapshot.js';
import type { AdsCall } from './transport.js';
import type { XdsMetrics } from './telemetry.js';
import type { DeltaDiscoveryResponse, DiscoveryResponse } from './wire.js';
import { TYPE_URLS } from './snapshot.js';

export interface Logger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface AdsServerOptions {
  store: ResourceReader;
  manager: ResourceManager;
  proxyConfigs: ProxyConfigService;
  authenticator: Authenticator;
  insights: InsightWriter;
  instanceId: string;
  logger: Logger;
  now: () => Date;
  /** `xdsServer.dataplaneStatusFlushInterval`. */
  flushIntervalMs: number;
  /** Half of `metrics.dataplane.idleTimeout`: a live stream's subscription moves on a generation this often. */
  generationIntervalMs: number;
  /** `xdsServer.nackBackoff`. */
  nackBackoffMs: number;
  /** `xdsServer.dataplaneDeregistrationDelay`. */
  deregistrationDelayMs: number;
  /** How long a verified token is trusted before the next request checks it again. */
  reauthenticateAfterMs: number;
  metrics?: XdsMetrics;
}

/** A live stream of a proxy, as the admin views see it. */
export interface ConnectedProxy {
  readonly node: ProxyNode;
  readonly snapshot: Snapshot | undefined;
  readonly sent: ReadonlyMap<string, SentResources>;
  readonly connectedAt: Date;
  /** The address the stream comes from (no port); empty when unknown. */
  readonly peerAddress: string;
}

/** Requests of one stream waiting their turn at most. */
const MAX_PENDING_REQUESTS = 1000;

const tooManyRequests = () => new StreamRefusal(`more than ${MAX_PENDING_REQUESTS} requests waiting to be handled`, status.RESOURCE_EXHAUSTED);

/** The longest ACKs wait for a push to be computed: a run of recomputations that never ends does not hold them back for good. */
const ACK_WAIT_MS = 1000;

const proxyKeyText = (resourceType: string, mesh: string, name: string): string => `${resourceType}\u0000${mesh}\u0000${name}`;

/** A resource body's violations as one line, for a refusal message. */
function describeError(error: unknown): string {
  if (error instanceof DomainError) {
    const causes = error.violations.map((violation) => `${violation.field}: ${violation.message}`);
    return causes.length > 0 ? causes.join('; ') : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** What every discovery request carries that the stream reads itself. */
interface StreamRequest {
  node_id?: string;
  node?: Record<string, unknown>;
  type_url?: string;
  response_nonce?: string;
}

/** A variant of the protocol: the per-type states of a stream, writing its responses. */
type StreamProtocol<Request, Response> = (write: (response: Response) => void, events: StreamEvents, nackBackoffMs: number, now: () => Date) => TypeStates<Request>;

const STATE_OF_THE_WORLD: StreamProtocol<DiscoveryRequest, DiscoveryResponse> = (...args) => new AdsTypeStates(...args);
const INCREMENTAL: StreamProtocol<DeltaDiscoveryRequest, DeltaDiscoveryResponse> = (...args) => new DeltaTypeStates(...args);

class AdsStream<Request extends StreamRequest, Response> implements ConnectedProxy {
  private session: ProxySession | undefined;
  private subscription: Subscription | undefined;
  private readonly types: TypeStates<Request>;
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  /** Requests waiting for a push to be computed, in all and per type. */
  private held = 0;
  private readonly heldTypes = new Map<string, number>();
  private closed = false;
  private credential = '';
  private verifiedAt = 0;
  private registered = false;
  private flushTimer: NodeJS.Timeout | undefined;
  /** A write of the subscription waits for the refresh queue to settle. */
  private flushWaiting = false;
  private generationTimer: NodeJS.Timeout | undefined;
  readonly connectedAt: Date;

  constructor(
    private readonly server: AdsServer,
    private readonly call: AdsCall<Request, Response>,
    protocol: StreamProtocol<Request, Response>,
  ) {
    const options = server.options;
    this.connectedAt = options.now();
    options.metrics?.streams(1);
    this.types = protocol(
      (response) => {
        if (!this.closed) this.call.write(response);
      },
      {
        responseSent: (typeUrl) => {
          this.subscription?.responseSent(typeUrl);
          options.metrics?.responseSent(typeUrl);
        },
        responseAnswered: (typeUrl, rejected, version, error, deliveryMs) => {
          this.subscription?.responseAnswered(typeUrl, rejected);
          options.metrics?.confirmation(typeUrl, !rejected);
          if (deliveryMs !== undefined) options.metrics?.delivery(deliveryMs);
          if (rejected) options.logger.warn({ proxy: this.session?.node.id, typeUrl, version, error }, 'the proxy rejected a configuration (NACK)');
        },
      },
      options.nackBackoffMs,
      options.now,
    );
  }

  get node(): ProxyNode {
    if (!this.session) throw new Error('the stream has not identified its proxy yet');
    return this.session.node;
  }

  get snapshot(): Snapshot | undefined {
    return this.session?.snapshot;
  }

  get sent(): ReadonlyMap<string, SentResources> {
    return this.types.sent();
  }

  get peerAddress(): string {
    return this.call.peerAddress;
  }

  take(request: Request): void {
    // An ACK (or NACK) arriving during a push waits for the push to be computed: until then it
    // changes nothing the push needs (docs/xds.md, Pushing changes). Requests of a type with one
    // waiting wait behind it; other types do not (their states are apart).
    const typeUrl = request.type_url ?? '';
    const heldOfType = this.heldTypes.get(typeUrl) ?? 0;
    if (heldOfType > 0 || (this.session && request.response_nonce && this.server.acksWait())) {
      if (++this.held > MAX_PENDING_REQUESTS) {
        this.refuse(tooManyRequests());
        return;
      }
      this.heldTypes.set(typeUrl, heldOfType + 1);
      const receivedAt = this.server.options.now().getTime();
      this.server.holdAck(() => {
        this.held--;
        const left = (this.heldTypes.get(typeUrl) ?? 1) - 1;
        if (left > 0) this.heldTypes.set(typeUrl, left);
        else this.heldTypes.delete(typeUrl);
        this.takeNow(request, receivedAt);
      });
      return;
    }
    this.takeNow(request);
  }

  /** `receivedAt`: when a request that waited arrived. */
  private takeNow(request: Request, receivedAt?: number): void {
    // Requests are handled in turn; a proxy that sends far more than it is answered is cut off, not queued without end.
    if (++this.pending > MAX_PENDING_REQUESTS) {
      this.refuse(tooManyRequests());
      return;
    }
    // A request of an open stream with none before it (an ACK, mostly) is handled at once, without a
    // chain of promises: a push to thousands of proxies brings as many ACKs. A token check falling
    // due during a push is only scheduled (checkAgain); with nothing pushed it goes before the answer.
    const checkDue = this.verificationDue();
    if (this.pending === 1 && this.session && !this.closed && !(checkDue && this.server.queue.idle)) {
      try {
        if (checkDue) void this.checkAgain();
        this.answer(request, receivedAt);
      } catch (error) {
        this.refuse(error);
      } finally {
        this.pending--;
      }
      return;
    }
    this.queue = this.queue
      .then(() => this.handle(request, receivedAt))
      .catch((error: unknown) => this.refuse(error))
      .finally(() => this.pending--);
  }

  private async handle(request: Request, receivedAt: number | undefined): Promise<void> {
    if (this.closed) return;
    if (!this.session) await this.open(request);
    else await this.checkAgain();
    this.answer(request, receivedAt);
  }

  /** Takes a request of an open stream (its node must stay the same) and answers what it waits for. */
  private answer(request: Request, receivedAt?: number): void {
    const session = this.session;
    if (this.closed || !session) return;
    const nodeId = request.node_id ?? '';
    if (nodeId !== '' && nodeId !== session.node.id) {
      throw new StreamRefusal(
        `stream was authenticated for ID ${session.node.id}. Received request is for node with ID ${nodeId}. Node ID cannot be changed after stream is initialized`,
      );
    }
    if (!this.types.takeRequest(request, receivedAt)) return;
    if (session.node.grpcClient && request.type_url === TYPE_URLS.listener) session.setGrpcListenerNames(this.types.namesOf(TYPE_URLS.listener));
    this.types.respond(session.snapshot);
  }

  /** The first request: who the proxy is, whether it may connect, its resource registered, its configuration followed. */
  private async open(request: Request): Promise<void> {
    const { options } = this.server;
    const node = proxyNodeOf(request.node);
    this.credential = credentialOf(this.call.authorization);
    if (this.credential === '' && node.grpcClient) this.credential = stringMetadata(node, METADATA.token) ?? '';
    const resourceType = RESOURCE_TYPE_OF[node.proxyType];
    const kind = getKind(resourceType);
    const stored = await options.store.get({ type: resourceType, mesh: node.mesh, name: node.name });
    const storedSpec = stored ? (JSON.parse(stored.spec) as DataplaneSpec) : undefined;
    const brought = this.broughtResource(node, resourceType);
    const spec = brought?.spec ?? storedSpec;
    if (!spec) {
      throw new StreamRefusal(
        `resource "${node.id}" not found; create a ${kind.name} in the control plane first or pass it as an argument to mesh-dp`,
      );
    }
    await this.authenticate(node, spec);
    if (brought) {
      // Replacing a registered proxy takes a token that could manage it (docs/xds.md, Registration).
      if (storedSpec) {
        try {
          await this.authenticate(node, storedSpec);
        } catch (error) {
          throw new StreamRefusal(`you are trying to override existing proxy to which you don't have an access.: ${describeError(error)}`);
        }
      }
      // What the control plane keeps in the stored resource stays, and a proxy back as it was writes nothing.
      const body = { ...brought.body, ...registeredSpec(resourceType, brought.spec, storedSpec) };
      try {
        await options.manager.apply(kind, { mesh: node.mesh, name: node.name }, body, { skipUnchanged: true });
      } catch (error) {
        throw new StreamRefusal(`could not register proxy passed in mesh-dp run: ${describeError(error)}`);
      }
      this.registered = true;
    }
    if (this.closed) return;
    this.verifiedAt = options.now().getTime();
    const subscription = new Subscription(options.instanceId, options.now);
    subscription.version = proxyVersionOf(node);
    this.subscription = subscription;
    const session = new ProxySession(
      {
        proxyConfigs: options.proxyConfigs,
        queue: this.server.queue,
        store: options.store,
        now: options.now,
        onError: (error, what) => options.logger.error({ err: error }, `could not compute ${what}`),
        ...(options.metrics ? { metrics: options.metrics } : {}),
      },
      node,
      () => this.types.respond(session.snapshot),
    );
    this.session = session;
    this.server.attach(this);
    options.logger.info({ proxy: node.id, proxyType: node.proxyType, grpcClient: node.grpcClient || undefined }, 'proxy connected');
    await session.start();
    // The first insight goes out in the background once the recomputations being run are done:
    // when thousands of proxies connect at once, their configurations go first (docs/xds.md,
    // Insights). A failed write is reported by the insight writer.
    this.server.queue.afterRun(() => {
      if (!this.closed) void this.flush();
    });
    this.flushTimer = setInterval(() => {
      // While configurations are being pushed the write waits for them to settle (a few seconds at most): pushes first.
      if (!subscription.dirty || this.flushWaiting) return;
      this.flushWaiting = true;
      void this.server.queue.whenIdle().then(() => {
        this.flushWaiting = false;
        if (!this.closed) return this.flush();
      });
    }, options.flushIntervalMs);
    this.flushTimer.unref();
    this.generationTimer = setInterval(() => subscription.advanceGeneration(), options.generationIntervalMs);
    this.generationTimer.unref();
  }

  /** The proxy resource the node metadata carries (mesh-dp passes it through the bootstrap). */
  private broughtResource(node: ProxyNode, resourceType: string): { body: Record<string, unknown>; spec: DataplaneSpec } | undefined {
    const text = stringMetadata(node, METADATA.resource);
    if (!text) return undefined;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new StreamRefusal('could not parse the proxy resource of the node metadata: expected JSON');
    }
    const kind = getKind(resourceType);
    const mesh = kind.scope === 'mesh' ? scalarText(body.mesh) : '';
    if (body.type !== kind.name || mesh !== node.mesh || body.name !== node.name) {
      throw new StreamRefusal(`proxyId ${node.id} does not match proxy resource ${String(body.type)} ${mesh}.${String(body.name)}`);
    }
    const decoded = decodeSpec(kind, body);
    if (!decoded.ok) throw new StreamRefusal(`invalid proxy resource: ${decoded.message}`);
    return { body, spec: decoded.spec };
  }

  private async authenticate(node: ProxyNode, spec: DataplaneSpec): Promise<void> {
    const { authenticator } = this.server.options;
    if (node.proxyType === 'dataplane') await authenticator.authenticateDataplane(this.credential, { mesh: node.mesh, name: node.name, spec });
    else await authenticator.authenticateZoneProxy(this.credential, node.proxyType);
  }

  /** Whether the token is due to be checked again (it may have been revoked since). */
  private verificationDue(): boolean {
    const { options } = this.server;
    return options.now().getTime() - this.verifiedAt >= options.reauthenticateAfterMs;
  }

  /** Later requests: the token is checked again once in a while. */
  private async checkAgain(): Promise<void> {
    if (!this.session || !this.verificationDue()) return;
    const { options } = this.server;
    this.verifiedAt = options.now().getTime();
    const refreshes = this.server.queue;
    if (refreshes.idle) return this.verifyAgain();
    // A check falling due while configurations are computed waits for them: pushes first (docs/xds.md, Authentication).
    void refreshes.whenIdle().then(() => {
      // Counted as pending: the requests after it wait for it.
      this.pending++;
      this.queue = this.queue
        .then(() => this.verifyAgain())
        .catch((error: unknown) => this.refuse(error))
        .finally(() => this.pending--);
    });
  }

  /** The token against the proxy's stored resource, as it is now. */
  private async verifyAgain(): Promise<void> {
    const session = this.session;
    if (!session || this.closed) return;
    const { options } = this.server;
    const stored = await options.store.get({ type: session.resourceType, mesh: session.node.mesh, name: session.node.name });
    if (stored) await this.authenticate(session.node, JSON.parse(stored.spec) as DataplaneSpec);
    this.verifiedAt = options.now().getTime();
  }

  /** Writes the subscription into the proxy's insight. */
  flush(): Promise<void> {
    const session = this.session;
    const subscription = this.subscription;
    if (!session || !subscription) return Promise.resolve();
    const mtls = session.node.proxyType === 'dataplane' && !session.node.grpcClient ? { figures: session.mtlsFigures(), regenerated: session.certificateRegenerated } : undefined;
    session.certificateRegenerated = false;
    return this.server.options.insights.write(session.resourceType, session.node.mesh, session.node.name, subscription, mtls);
  }

  private refuse(error: unknown): void {
    if (this.closed) return;
    const refusal = error instanceof StreamRefusal ? error : undefined;
    const message = refusal ? refusal.message : `internal error: ${describeError(error)}`;
    this.server.options.logger.warn({ proxy: this.session?.node.id, reason: message }, 'closing an xDS stream');
    this.call.fail(refusal?.code ?? status.INTERNAL, message);
    void this.close();
  }

  /** The stream is over: the subscription is closed and written, the proxy deregistered later unless it returns. */
  async close(shuttingDown = false): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.server.options.metrics?.streams(-1);
    this.types.close();
    clearInterval(this.flushTimer);
    clearInterval(this.generationTimer);
    const session = this.session;
    if (!session) return;
    session.stop();
    this.server.detach(this);
    this.server.options.logger.info({ proxy: session.node.id }, 'proxy disconnected');
    this.subscription?.disconnect();
    const flushed = this.flush();
    if (this.registered && !shuttingDown) this.server.scheduleDeregistration(session.resourceType, session.node);
    await flushed;
  }

  /** Ends the stream from this side (shutdown): the proxy reconnects, to this instance or another. */
  async end(): Promise<void> {
    const closing = this.close(true);
    this.call.fail(status.UNAVAILABLE, 'the control plane is shutting down');
    await closing;
  }
}

/** A stream of either variant. */
type AnyStream = AdsStream<StreamRequest, unknown>;

/** Serves the ADS streams of one control plane instance. */
export class AdsServer {
  /** The proxies' recomputations, in turn. */
  readonly queue: RefreshQueue;
  private readonly streams = new Set<AnyStream>();
  private readonly byProxy = new Map<string, Set<AnyStream>>();
  private readonly deregistrations = new Set<NodeJS.Timeout>();
  private shuttingDown = false;
  /** ACKs waiting for the push being computed, in the order they came. */
  private heldAcks: Array<() => void> = [];
  private heldSince = 0;
  private heldTimer: NodeJS.Timeout | undefined;

  constructor(readonly options: AdsServerOptions) {
    // Token checks and insight writes wait for pushes to settle, half a status flush interval at
    // most: under a steady flow of changes an insight is still written every one and a half, and its
    // proxy does not show offline (docs/xds.md, Pushing changes).
    this.queue = new RefreshQueue(options.flushIntervalMs / 2);
  }

  /** The gRPC handler of `StreamAggregatedResources` (state of the world). */
  handleStream(call: AdsCall<DiscoveryRequest, DiscoveryResponse>): void {
    this.serve(call, STATE_OF_THE_WORLD);
  }

  /** The gRPC handler of `DeltaAggregatedResources` (incremental). */
  handleDeltaStream(call: AdsCall<DeltaDiscoveryRequest, DeltaDiscoveryResponse>): void {
    this.serve(call, INCREMENTAL);
  }

  private serve<Request extends StreamRequest, Response>(call: AdsCall<Request, Response>, protocol: StreamProtocol<Request, Response>): void {
    if (this.shuttingDown) {
      call.fail(status.UNAVAILABLE, 'the control plane is shutting down');
      return;
    }
    const stream = new AdsStream(this, call, protocol);
    this.streams.add(stream);
    call.on('data', (request: Request) => stream.take(request));
    const over = () => {
      this.streams.delete(stream);
      void stream.close(this.shuttingDown);
    };
    call.on('end', () => {
      over();
      call.end();
    });
    call.on('close', over);
  }

  /** Whether an ACK arriving now waits: a push is being computed, and the ACKs waiting have not waited their longest. */
  acksWait(): boolean {
    return this.queue.running && (this.heldAcks.length === 0 || performance.now() - this.heldSince < ACK_WAIT_MS);
  }

  /** Takes an ACK once the push in progress is computed (after its last responses have left), or after `ACK_WAIT_MS`. */
  holdAck(take: () => void): void {
    if (this.heldAcks.length === 0) {
      this.heldSince = performance.now();
      this.queue.afterRun(this.releaseAcks);
      this.heldTimer = setTimeout(this.releaseAcks, ACK_WAIT_MS);
      this.heldTimer.unref();
    }
    this.heldAcks.push(take);
  }

  private readonly releaseAcks = (): void => {
    clearTimeout(this.heldTimer);
    const held = this.heldAcks;
    this.heldAcks = [];
    for (const take of held) take();
  };

  attach(stream: AnyStream): void {
    const key = proxyKeyText(RESOURCE_TYPE_OF[stream.node.proxyType], stream.node.mesh, stream.node.name);
    let streams = this.byProxy.get(key);
    if (!streams) this.byProxy.set(key, (streams = new Set()));
    streams.add(stream);
  }

  detach(stream: AnyStream): void {
    const key = proxyKeyText(RESOURCE_TYPE_OF[stream.node.proxyType], stream.node.mesh, stream.node.name);
    const streams = this.byProxy.get(key);
    streams?.delete(stream);
    if (streams?.size === 0) this.byProxy.delete(key);
  }

  /** The newest live stream of a proxy on this instance. */
  connected(resourceType: string, mesh: string, name: string): ConnectedProxy | undefined {
    const streams = this.byProxy.get(proxyKeyText(resourceType, mesh, name));
    if (!streams) return undefined;
    return [...streams].reduce<AnyStream | undefined>((newest, stream) => (!newest || stream.connectedAt >= newest.connectedAt ? stream : newest), undefined);
  }

  /** How many proxies are connected to this instance. */
  get connectedCount(): number {
    return this.byProxy.size;
  }

  /**
   * Deletes a registered proxy's resource after the deregistration delay, unless it came back to
   * this instance or connected to another meanwhile (its insight's last subscription says which).
   */
  scheduleDeregistration(resourceType: string, node: ProxyNode): void {
    const { options } = this;
    const timer = setTimeout(() => {
      this.deregistrations.delete(timer);
      void this.deregister(resourceType, node).catch((error: unknown) => options.logger.error({ err: error, proxy: node.id }, 'could not deregister a proxy'));
    }, options.deregistrationDelayMs);
    timer.unref();
    this.deregistrations.add(timer);
  }

  private async deregister(resourceType: string, node: ProxyNode): Promise<void> {
    if (this.shuttingDown || this.byProxy.has(proxyKeyText(resourceType, node.mesh, node.name))) return;
    const { options } = this;
    const insightKind = insightKindOf(resourceType);
    const insight = await options.store.get({ type: insightKind.name, mesh: node.mesh, name: node.name });
    const subscriptions = insight ? ((JSON.parse(insight.spec) as { subscriptions?: Array<{ controlPlaneInstanceId?: string }> }).subscriptions ?? []) : [];
    const last = subscriptions.at(-1);
    if (last && last.controlPlaneInstanceId !== options.instanceId) return;
    try {
      await options.manager.remove(getKind(resourceType), { mesh: node.mesh, name: node.name });
      options.logger.info({ proxy: node.id }, 'proxy deregistered');
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'not_found')) throw error;
    }
  }

  /**
   * Ends every stream (they reconnect elsewhere or later) and writes their subscriptions closed.
   * Proxies are not deregistered: they are expected back.
   */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    for (const timer of this.deregistrations) clearTimeout(timer);
    this.deregistrations.clear();
    await Promise.all([...this.streams].map((stream) => stream.end()));
    this.streams.clear();
    await this.options.insights.drained();
  }
}
