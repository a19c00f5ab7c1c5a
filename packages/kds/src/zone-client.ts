// A zone's end of zone sync: it dials the global, keeps one session open, applies what the global
// sends and sends up its own proxies, reconnecting with capped exponential backoff
// (docs/multizone.md, The protocol).
import { readFileSync } from 'node:fs';
import type { ResourceManager } from '@mesh/resource-manager';
import { syncCursorSetting, syncedKind } from '@mesh/resource-manager';
import { createTRPCClient, createWSClient, wsLink, type TRPCClient } from '@trpc/client';
import { WebSocket } from 'ws';
import { ownedByGlobal, zoneToGlobal } from './channels.js';
import type { KdsRouter } from './global-server.js';
import { SyncOutbox } from './outbox.js';
import { CursorSchema, ZONE_TOKEN_FEATURE, type AdminReply, type Cursor, type SessionEvent, type SyncMessage, type Version } from './protocol.js';
import type { SyncLogger, SyncMetrics } from './telemetry.js';

export interface ZoneSyncOptions {
  manager: ResourceManager;
  zone: string;
  /** `grpc(s)://host:port` or `http(s)://host:port` of the global's sync port (`s`: TLS). */
  globalAddress: string;
  /** PEM file of the authority that signed the global's certificate; the system's otherwise. */
  rootCaFile?: string;
  tlsSkipVerify?: boolean;
  /** A zone token for a global that requires one (docs/multizone.md, Authentication). */
  token?: string;
  /** The id of this store's history, in every cursor the zone hands out. */
  clusterId: string;
  version: Version;
  /** JSON text of this zone's configuration, secrets masked. */
  config: string;
  /** The address this zone's API can be reached at. */
  url: string;
  maxMessageBytes: number;
  /** Answers an API request the global forwards for one of this zone's proxies. */
  serveAdminRequest: (path: string) => Promise<Omit<AdminReply, 'requestId'>>;
  logger: SyncLogger;
  metrics?: SyncMetrics;
  /** First and longest wait between attempts. */
  backoff?: { minMs: number; maxMs: number };
  keepAlive?: { intervalMs: number; pongTimeoutMs: number };
}

/** How often a zone pings the global unless the global says otherwise. */
const DEFAULT_HEALTH_CHECK_MS = 5 * 60_000;

/** The WebSocket URL of the global's sync address; throws on a scheme it does not speak. */
export function syncUrl(globalAddress: string): { url: string; tls: boolean } {
  let parsed: URL;
  try {
    parsed = new URL(globalAddress);
  } catch {
    throw new Error(`${JSON.stringify(globalAddress)} is not a URL such as grpcs://global:5685`);
  }
  const scheme = parsed.protocol.replace(/:$/, '');
  const tls = ({ grpcs: true, https: true, wss: true, grpc: false, http: false, ws: false } as Record<string, boolean | undefined>)[scheme];
  if (tls === undefined) throw new Error(`unsupported scheme "${scheme}" in zone GlobalAddress. Use one of [grpc grpcs http https]`);
  if (!parsed.host) throw new Error(`${JSON.stringify(globalAddress)} names no host`);
  return { url: `${tls ? 'wss' : 'ws'}://${parsed.host}/`, tls };
}

type Client = TRPCClient<KdsRouter>;

/** The session under way: its client and what it is doing. */
interface Session {
  client: Client;
  outbox: SyncOutbox | undefined;
  /** Events apply one at a time, in order. */
  work: Promise<void>;
  fail: (error: Error) => void;
}

export class ZoneSyncClient {
  private stopped = true;
  private session: Session | undefined;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  /** A WebSocket with this zone's TLS settings, as the tRPC client constructs it (from a URL only). */
  private readonly socketClass: new (address: string) => WebSocket;
  private readonly url: string;
  private connectedNow = false;
  private lastErrorNow: Error | undefined;

  constructor(private readonly options: ZoneSyncOptions) {
    const { url, tls } = syncUrl(options.globalAddress);
    this.url = url;
    const ca = tls && options.rootCaFile ? readFileSync(options.rootCaFile, 'utf8') : undefined;
    const socketOptions = { maxPayload: options.maxMessageBytes, ...(tls ? { rejectUnauthorized: !options.tlsSkipVerify, ...(ca ? { ca } : {}) } : {}) };
    this.socketClass = class extends WebSocket {
      constructor(address: string) {
        super(address, socketOptions);
      }
    };
  }

  /** Whether a session with the global is open and welcomed. */
  get connected(): boolean {
    return this.connectedNow;
  }

  /** Why the last session ended or was refused; undefined before any did. */
  get lastError(): Error | undefined {
    return this.lastErrorNow;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.session?.fail(new Error('stopping'));
    this.wakeUp?.();
    await this.loop;
  }

  private setConnected(connected: boolean): void {
    if (this.connectedNow === connected) return;
    this.connectedNow = connected;
    this.options.metrics?.streams(connected ? 1 : -1);
  }

  private async run(): Promise<void> {
    const { minMs, maxMs } = this.options.backoff ?? { minMs: 250, maxMs: 5000 };
    let attempt = 0;
    while (!this.stopped) {
      const welcomed = await this.runSession().then(
        (welcomed) => welcomed,
        (error: unknown) => {
          this.lastErrorNow = error instanceof Error ? error : new Error(String(error));
          this.options.logger.warn({ err: error, global: this.options.globalAddress }, 'zone sync with the global stopped; reconnecting');
          return false;
        },
      );
      this.setConnected(false);
      if (this.stopped) break;
      attempt = welcomed ? 0 : attempt + 1;
      const wait = Math.min(maxMs, minMs * 2 ** attempt) * (0.8 + Math.random() * 0.4);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** One connection: resolves once it ends, with whether the global welcomed it. */
  private async runSession(): Promise<boolean> {
    const { options } = this;
    const cursor = await this.cursor();
    let welcomed = false;
    return new Promise<boolean>((resolve, reject) => {
      let ended = false;
      let healthTimer: NodeJS.Timeout | undefined;
      const wsClient = createWSClient({
        url: this.url,
        WebSocket: this.socketClass as unknown as typeof globalThis.WebSocket,
        connectionParams: { zone: options.zone, ...(options.token ? { token: options.token } : {}) },
        keepAlive: { enabled: true, intervalMs: options.keepAlive?.intervalMs ?? 15_000, pongTimeoutMs: options.keepAlive?.pongTimeoutMs ?? 15_000 },
        onClose: () => end(new Error('the connection to the global closed')),
      });
      const client = createTRPCClient<KdsRouter>({ links: [wsLink({ client: wsClient })] });
      const end = (error: Error | undefined) => {
        if (ended) return;
        ended = true;
        if (healthTimer) clearTimeout(healthTimer);
        session.outbox?.stop();
        subscription.unsubscribe();
        void wsClient.close();
        if (this.session === session) this.session = undefined;
        if (error && !welcomed) reject(error);
        else {
          if (error && !this.stopped) options.logger.warn({ err: error }, 'zone sync session ended');
          resolve(welcomed);
        }
      };
      const session: Session = { client, outbox: undefined, work: Promise.resolve(), fail: end };
      this.session = session;
      const healthCheck = async () => {
        const { intervalMs } = await client.healthCheck.mutate();
        healthTimer = setTimeout(() => void healthCheck().catch((error: unknown) => end(error as Error)), intervalMs > 0 ? intervalMs : DEFAULT_HEALTH_CHECK_MS);
        healthTimer.unref();
      };
      const handle = async (event: SessionEvent) => {
        if (event.kind === 'welcome') {
          welcomed = true;
          this.setConnected(true);
          options.logger.info({ global: options.globalAddress, globalInstanceId: event.globalInstanceId }, 'connected to the global control plane');
          session.outbox = this.startSending(client, event.zoneCursor, end);
          await healthCheck();
        } else if (event.kind === 'sync') await this.apply(client, event.message);
      };
      const subscription = client.session.subscribe(
        { version: options.version, config: options.config, url: options.url, features: [ZONE_TOKEN_FEATURE], cursor },
        {
          onData: (event) => {
            if (event.kind === 'admin') {
              void this.answerAdmin(client, event.request.requestId, event.request.path);
              return;
            }
            session.work = session.work.then(() => handle(event)).catch((error: unknown) => end(error as Error));
          },
          onError: (error) => end(error),
          onComplete: () => end(new Error('the global ended the session')),
        },
      );
    });
  }

  private startSending(client: Client, cursor: Cursor | null, fail: (error: Error) => void): SyncOutbox {
    const { manager, zone, clusterId, metrics } = this.options;
    const outbox = new SyncOutbox({
      store: manager.reader,
      storeId: clusterId,
      channel: zoneToGlobal(zone),
      maxMessageBytes: this.options.maxMessageBytes,
      send: async (message) => {
        const kinds = message.kinds.map((part) => part.type);
        metrics?.responsesSent(kinds);
        try {
          await client.push.mutate(message);
        } catch (error) {
          metrics?.confirmations(kinds, false);
          throw error;
        }
        metrics?.confirmations(kinds, true);
      },
      onError: (error) => fail(error instanceof Error ? error : new Error(String(error))),
    });
    outbox.start(cursor).catch((error: unknown) => fail(error as Error));
    return outbox;
  }

  /** Applies what the global sent in one transaction with its cursor, then acknowledges (or rejects) it. */
  private async apply(client: Client, message: SyncMessage): Promise<void> {
    const { manager, zone, metrics } = this.options;
    const nonces = message.kinds.map((part) => part.nonce);
    const started = process.hrtime.bigint();
    try {
      await manager.applySynced({
        origin: 'global',
        full: message.full,
        kinds: message.kinds.map((part) => ({ kind: syncedKind(part.type), resources: part.resources, removed: part.removed })),
        owns: ownedByGlobal(zone),
        ...(message.cursor ? { settings: { [syncCursorSetting('global')]: JSON.stringify(message.cursor) } } : {}),
      });
    } catch (error) {
      await client.ack.mutate({ nonces, error: (error as Error).message }).catch(() => {});
      throw error;
    } finally {
      metrics?.applied(Number(process.hrtime.bigint() - started) / 1e9);
    }
    await client.ack.mutate({ nonces });
  }

  private async answerAdmin(client: Client, requestId: string, path: string): Promise<void> {
    let reply: Omit<AdminReply, 'requestId'>;
    try {
      reply = await this.options.serveAdminRequest(path);
    } catch (error) {
      this.options.logger.error({ err: error, path }, 'a request the global forwarded failed');
      reply = { status: 500, contentType: 'application/json', body: '' };
    }
    await client.adminReply.mutate({ requestId, ...reply }).catch(() => {});
  }

  /** Where this zone stands with what the global sent. */
  private async cursor(): Promise<Cursor | null> {
    const text = await this.options.manager.reader.getSetting(syncCursorSetting('global'));
    if (!text) return null;
    const parsed = CursorSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  }
}
