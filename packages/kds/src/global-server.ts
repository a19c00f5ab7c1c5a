// The global's end of zone sync: a tRPC router on a WebSocket server (the sync port), one session
// per connected zone (docs/multizone.md, The protocol).
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { DomainError, isDnsLabel, NAME_MESSAGES, zoneKind, type ZoneSpec } from '@mesh/model';
import { syncCursorSetting, syncedKind, type ResourceManager } from '@mesh/resource-manager';
import type { ResourceChange } from '@mesh/store';
import { initTRPC, TRPCError } from '@trpc/server';
import { applyWSSHandler } from '@trpc/server/adapters/ws';
import { WebSocketServer } from 'ws';
import { globalToZone, ownedByZone, zoneMessageProblem } from './channels.js';
import { SyncOutbox } from './outbox.js';
import {
  AckSchema,
  AdminReplySchema,
  ConnectionParamsSchema,
  CursorSchema,
  HelloSchema,
  SyncMessageSchema,
  type AdminReply,
  type Cursor,
  type Hello,
  type SessionEvent,
  type SyncMessage,
  type Version,
} from './protocol.js';
import type { SyncLogger, SyncMetrics } from './telemetry.js';
import { ZoneInsightRecorder, type ZoneSubscription } from './zone-insights.js';

export interface GlobalSyncOptions {
  manager: ResourceManager;
  /** This process's id, recorded in each subscription. */
  instanceId: string;
  /** The id of this store's history, in every cursor the global hands out. */
  clusterId: string;
  version: Version;
  port: number;
  host?: string;
  /** TLS on the sync port; plain WebSocket without. */
  tls?: { cert: string; key: string };
  /** Largest message either side takes, in bytes. */
  maxMessageBytes: number;
  /** How often a changed subscription is written. */
  zoneInsightFlushMs: number;
  subscriptionLimit: number;
  compactFinishedSubscriptions: boolean;
  /** A subscription whose generation stood still this long is closed by the finalizer (the leader's). */
  idleTimeoutMs: number;
  /** The zone is told to ping this often (0: its default). */
  healthCheckIntervalMs: number;
  /** Quiet time before a ping, and the wait for its answer, on every connection. */
  keepAlive?: { pingMs: number; pongWaitMs: number };
  /** No other instance shares the store: every open subscription at start is a leftover. */
  soleInstance: boolean;
  /**
   * Checks a connecting zone's token when zones must authenticate (docs/multizone.md,
   * Authentication): the reason it is refused, or undefined.
   */
  authenticate?: (zone: string, token: string | undefined) => Promise<string | undefined>;
  /** Whether this instance is the leader now (the finalizer runs on the leader only). */
  isLeader: () => boolean;
  logger: SyncLogger;
  metrics?: SyncMetrics;
}

/** How long the owning zone has to answer an admin request. */
const ADMIN_TIMEOUT_MS = 10_000;
/** Unanswered nonces a session remembers. */
const MAX_UNANSWERED = 10_000;

interface ConnectionContext {
  zone: string | undefined;
  /** The zone token the zone presented, if any. */
  token: string | undefined;
  session?: ZoneSession;
}

class Queue<T> {
  private items: T[] = [];
  private waiting: ((item: T | undefined) => void) | undefined;
  private closed = false;

  push(item: T): void {
    if (this.closed) return;
    if (this.waiting) {
      const wake = this.waiting;
      this.waiting = undefined;
      wake(item);
    } else this.items.push(item);
  }

  /** The next item, or undefined once closed and drained. */
  next(): Promise<T | undefined> {
    if (this.items.length > 0) return Promise.resolve(this.items.shift());
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  close(): void {
    this.closed = true;
    this.waiting?.(undefined);
    this.waiting = undefined;
  }
}

/** One zone connected to this instance: its outgoing sync, its subscription record, its admin requests. */
class ZoneSession {
  readonly events = new Queue<SessionEvent>();
  readonly outbox: SyncOutbox;
  /** Nonces sent and not yet answered, with the kinds they covered; the oldest go past a bound, so a zone that never answers costs no more. */
  private readonly unanswered = new Map<string, string>();
  private readonly admin = new Map<string, (reply: AdminReply) => void>();
  private pushes: Promise<unknown> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  failure: Error | undefined;

  constructor(
    readonly zone: string,
    readonly subscription: ZoneSubscription,
    private readonly server: GlobalSyncServer,
    features: readonly string[],
  ) {
    const { manager, clusterId, metrics } = server.options;
    this.outbox = new SyncOutbox({
      store: manager.reader,
      storeId: clusterId,
      channel: globalToZone(manager.reader, zone, features),
      maxMessageBytes: server.options.maxMessageBytes,
      // eslint-disable-next-line @typescript-eslint/require-await -- the outbox awaits each send; this one only queues the message
      send: async (message) => {
        for (const part of message.kinds) this.unanswered.set(part.nonce, part.type);
        for (const nonce of this.unanswered.keys()) {
          if (this.unanswered.size <= MAX_UNANSWERED) break;
          this.unanswered.delete(nonce);
        }
        const kinds = message.kinds.map((part) => part.type);
        subscription.count('responsesSent', kinds);
        metrics?.responsesSent(kinds);
        this.events.push({ kind: 'sync', message });
      },
      onError: (error) => this.end(error instanceof Error ? error : new Error(String(error))),
    });
    this.timers.push(setInterval(() => void subscription.flush().catch((err: unknown) => server.options.logger.error({ err, zone }, 'zone insight could not be written')), server.options.zoneInsightFlushMs));
    this.timers.push(setInterval(() => subscription.tick(), server.options.idleTimeoutMs / 2));
    for (const timer of this.timers) timer.unref();
  }

  acknowledge(nonces: readonly string[], error: string | undefined): void {
    const kinds = nonces.map((nonce) => this.unanswered.get(nonce)).filter((kind): kind is string => kind !== undefined);
    for (const nonce of nonces) this.unanswered.delete(nonce);
    this.subscription.count(error === undefined ? 'responsesAcknowledged' : 'responsesRejected', kinds);
    this.server.options.metrics?.confirmations(kinds, error === undefined);
    if (error !== undefined) this.server.options.logger.warn({ zone: this.zone, error, kinds }, 'a zone rejected what the global sent');
  }

  /** Applies what the zone sends, one message at a time, in one transaction each. */
  receive(message: SyncMessage): Promise<void> {
    const { manager, metrics } = this.server.options;
    const problem = zoneMessageProblem(this.zone, message);
    if (problem) return Promise.reject(new TRPCError({ code: 'BAD_REQUEST', message: problem }));
    const apply = async () => {
      const started = process.hrtime.bigint();
      const cursor = message.cursor ? { [syncCursorSetting(this.zone)]: JSON.stringify(message.cursor) } : undefined;
      await manager.applySynced({
        origin: { zone: this.zone },
        full: message.full,
        kinds: message.kinds.map((part) => ({ kind: syncedKind(part.type), resources: part.resources, removed: part.removed })),
        owns: ownedByZone(this.zone),
        ...(cursor ? { settings: cursor } : {}),
      }).finally(() => metrics?.applied(Number(process.hrtime.bigint() - started) / 1e9));
    };
    const applied = this.pushes.then(apply);
    this.pushes = applied.catch(() => {});
    return applied;
  }

  /** Asks the zone to answer an API request for one of its proxies. */
  request(path: string): Promise<AdminReply> {
    const requestId = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.admin.delete(requestId);
        reject(new DomainError('unavailable', `zone ${this.zone} did not answer within ${ADMIN_TIMEOUT_MS / 1000}s`, { title: 'Service Unavailable' }));
      }, ADMIN_TIMEOUT_MS);
      this.admin.set(requestId, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.events.push({ kind: 'admin', request: { requestId, path } });
    });
  }

  answer(reply: AdminReply): void {
    const waiting = this.admin.get(reply.requestId);
    this.admin.delete(reply.requestId);
    waiting?.(reply);
  }

  /** Ends the session: the zone's subscription sees the error and the zone reconnects (or is refused). */
  end(error?: Error): void {
    if (error && !this.failure) this.failure = error;
    this.events.close();
  }

  dispose(): Promise<void> {
    this.outbox.stop();
    this.events.close();
    for (const timer of this.timers) clearInterval(timer);
    for (const [requestId, waiting] of this.admin) {
      waiting({ requestId, status: 503, contentType: 'application/json', body: '' });
    }
    this.admin.clear();
    return this.subscription.close();
  }
}

const zoneEnabled = (spec: string) => (JSON.parse(spec) as ZoneSpec).enabled !== false;

/** The sync port of a global control plane. */
export class GlobalSyncServer {
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private readonly sessions = new Map<string, ZoneSession>();
  private readonly recorder: ZoneInsightRecorder;
  private finalizer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  readonly router;

  constructor(readonly options: GlobalSyncOptions) {
    this.recorder = new ZoneInsightRecorder({
      manager: options.manager,
      store: options.manager.reader,
      globalInstanceId: options.instanceId,
      version: options.version,
      subscriptionLimit: options.subscriptionLimit,
      compactFinishedSubscriptions: options.compactFinishedSubscriptions,
    });
    this.router = this.createRouter();
  }

  /** Zones connected to this instance now. */
  connectedZones(): string[] {
    return [...this.sessions.keys()];
  }

  isConnected(zone: string): boolean {
    return this.sessions.has(zone);
  }

  /** Sends an API request to the zone that owns the proxy; undefined when that zone is not connected here. */
  forward(zone: string, path: string): Promise<AdminReply> | undefined {
    return this.sessions.get(zone)?.request(path);
  }

  async start(): Promise<number> {
    const { options } = this;
    if (options.soleInstance) await this.recorder.finalize(true);
    this.finalizer = setInterval(() => {
      if (options.isLeader()) this.recorder.finalize().catch((err: unknown) => options.logger.error({ err }, 'zone insights could not be finalized'));
    }, options.idleTimeoutMs);
    this.finalizer.unref();
    this.unsubscribe = options.manager.reader.onChange((change) => this.onZoneChange(change));

    const server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2' }) : createHttpServer();
    server.on('request', (_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' }).end('zone sync speaks WebSocket\n');
    });
    const wss = new WebSocketServer({ server, maxPayload: options.maxMessageBytes });
    applyWSSHandler({
      wss,
      router: this.router,
      createContext: ({ info }): ConnectionContext => {
        const params = ConnectionParamsSchema.safeParse(info.connectionParams ?? {});
        return params.success ? { zone: params.data.zone, token: params.data.token } : { zone: undefined, token: undefined };
      },
      keepAlive: { enabled: true, pingMs: options.keepAlive?.pingMs ?? 15_000, pongWaitMs: options.keepAlive?.pongWaitMs ?? 15_000 },
      onError: ({ error, path }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR') options.logger.error({ err: error, path }, 'zone sync request failed');
      },
    });
    this.server = server;
    this.wss = wss;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host ?? '0.0.0.0', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : options.port);
      });
    });
  }

  /** Closes every session (recording the disconnects) and the port. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    if (this.finalizer) clearInterval(this.finalizer);
    for (const session of this.sessions.values()) session.end();
    await Promise.all([...this.sessions.values()].map((session) => session.dispose().catch(() => {})));
    for (const client of this.wss?.clients ?? []) client.terminate();
    await new Promise<void>((resolve) => (this.wss ? this.wss.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (this.server?.listening ? this.server.close(() => resolve()) : resolve()));
  }

  /** A zone disabled or deleted loses its session (docs/multizone.md, Zones). */
  private onZoneChange(change: ResourceChange): void {
    if (change.type !== zoneKind.name) return;
    const session = this.sessions.get(change.name);
    if (!session) return;
    void this.options.manager.reader.get(change).then((stored) => {
      if (!stored) session.end(new TRPCError({ code: 'FORBIDDEN', message: `zone ${change.name} was deleted` }));
      else if (!zoneEnabled(stored.spec)) session.end(new TRPCError({ code: 'FORBIDDEN', message: `zone ${change.name} is disabled` }));
    });
  }

  /** The zone's Zone, created as the reference does for a new zone; a disabled zone is refused. */
  private async admitZone(zone: string): Promise<void> {
    const { manager } = this.options;
    const stored = await manager.get(zoneKind, '', zone);
    if (stored) {
      if (!zoneEnabled(stored.spec)) throw new TRPCError({ code: 'FORBIDDEN', message: `zone ${zone} is disabled` });
      return;
    }
    try {
      await manager.apply(zoneKind, { mesh: '', name: zone }, { type: zoneKind.name, name: zone, enabled: true });
    } catch (error) {
      if (error instanceof DomainError && error.code === 'already_exists') return;
      throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'Global CP could not create a zone', cause: error });
    }
  }

  private async zoneCursor(zone: string): Promise<Cursor | null> {
    const text = await this.options.manager.reader.getSetting(syncCursorSetting(zone));
    if (!text) return null;
    const parsed = CursorSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  }

  private async *runSession(zone: string | undefined, hello: Hello, ctx: ConnectionContext, signal: AbortSignal | undefined): AsyncGenerator<SessionEvent> {
    const { options } = this;
    if (zone === undefined) throw new TRPCError({ code: 'UNAUTHORIZED', message: "'client-id' is not present in metadata" });
    if (!isDnsLabel(zone)) throw new TRPCError({ code: 'BAD_REQUEST', message: `zone name ${JSON.stringify(zone)}: ${NAME_MESSAGES.dnsLabel}` });
    const refusal = await options.authenticate?.(zone, ctx.token);
    if (refusal !== undefined) {
      options.logger.warn({ zone, reason: refusal }, 'zone refused');
      throw new TRPCError({ code: 'UNAUTHORIZED', message: refusal });
    }
    await this.admitZone(zone);
    this.sessions.get(zone)?.end(new TRPCError({ code: 'CONFLICT', message: `zone ${zone} connected again` }));
    const subscription = this.recorder.open(zone, hello);
    const session = new ZoneSession(zone, subscription, this, hello.features);
    this.sessions.set(zone, session);
    ctx.session = session;
    options.metrics?.streams(1);
    options.logger.info({ zone, url: hello.url, version: hello.version.version }, 'zone connected');
    const aborted = () => session.end();
    signal?.addEventListener('abort', aborted);
    try {
      await subscription.flush();
      yield { kind: 'welcome', globalInstanceId: options.instanceId, clusterId: options.clusterId, zoneCursor: await this.zoneCursor(zone) };
      await session.outbox.start(hello.cursor);
      for (;;) {
        const event = await session.events.next();
        if (!event) break;
        yield event;
      }
      if (session.failure) throw session.failure;
    } finally {
      signal?.removeEventListener('abort', aborted);
      if (this.sessions.get(zone) === session) this.sessions.delete(zone);
      options.metrics?.streams(-1);
      options.logger.info({ zone, reason: session.failure?.message }, 'zone disconnected');
      await session.dispose().catch((err: unknown) => options.logger.error({ err, zone }, 'zone insight could not be written'));
    }
  }

  private createRouter() {
    const t = initTRPC.context<ConnectionContext>().create();
    const sessionOf = (ctx: ConnectionContext): ZoneSession => {
      if (!ctx.session || ctx.session.failure) throw new TRPCError({ code: 'PRECONDITION_FAILED', message: 'no zone sync session on this connection' });
      return ctx.session;
    };
    const runSession = this.runSession.bind(this);
    return t.router({
      /** The zone's session: a welcome, then what the global sends and asks. */
      session: t.procedure.input(HelloSchema).subscription(async function* ({ ctx, input, signal }) {
        yield* runSession(ctx.zone, input, ctx, signal);
      }),
      /** The zone applied (or rejected) what the global sent. */
      ack: t.procedure.input(AckSchema).mutation(({ ctx, input }) => {
        sessionOf(ctx).acknowledge(input.nonces, input.error);
      }),
      /** What the zone sends: applied in one transaction; an error is the zone's NACK. */
      push: t.procedure.input(SyncMessageSchema).mutation(async ({ ctx, input }) => {
        try {
          await sessionOf(ctx).receive(input);
        } catch (error) {
          if (error instanceof TRPCError) throw error;
          throw new TRPCError({ code: 'BAD_REQUEST', message: (error as Error).message, cause: error });
        }
      }),
      /** The zone's answer to an admin request. */
      adminReply: t.procedure.input(AdminReplySchema).mutation(({ ctx, input }) => {
        sessionOf(ctx).answer(input);
      }),
      /** The zone's liveness ping: recorded, answered with when to ping next. */
      healthCheck: t.procedure.mutation(async ({ ctx }) => {
        await this.recorder.healthCheck(sessionOf(ctx).zone);
        return { intervalMs: this.options.healthCheckIntervalMs };
      }),
    });
  }
}

export type KdsRouter = GlobalSyncServer['router'];
