// A global and zones in one process, each on its own SQLite file, speaking zone sync over real
// WebSockets on loopback: for this package's tests.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getKind, type Mode } from '@mesh/model';
import { registerCaHooks } from '@mesh/pki';
import { ResourceManager } from '@mesh/resource-manager';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { registerSigningKeyHooks } from '@mesh/tokens';
import { GlobalSyncServer } from './global-server.js';
import type { AdminReply } from './protocol.js';
import type { SyncLogger, SyncMetrics } from './telemetry.js';
import { ZoneSyncClient } from './zone-client.js';

export const quietLogger: SyncLogger = { info: () => {}, warn: () => {}, error: () => {} };

export const VERSION = { version: '2.5.0', gitTag: '2.5.0', gitCommit: 'test', buildDate: 'test' };

/** Counts what a side of sync reports, to tell a catch-up from a full sync. */
export class CountingMetrics implements SyncMetrics {
  sent = new Map<string, number>();
  /** The kinds of each message sent, in order. */
  messages: string[][] = [];
  nacks = 0;
  streamsOpen = 0;
  responsesSent(kinds: readonly string[]): void {
    for (const kind of kinds) this.sent.set(kind, (this.sent.get(kind) ?? 0) + 1);
    this.messages.push([...kinds]);
  }
  confirmations(_kinds: readonly string[], accepted: boolean): void {
    if (!accepted) this.nacks += 1;
  }
  applied(): void {}
  streams(delta: number): void {
    this.streamsOpen += delta;
  }
}

export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface Side {
  store: SqliteResourceStore;
  manager: ResourceManager;
  path: string;
}

export function openSide(mode: Mode, zoneName?: string, path = join(mkdtempSync(join(tmpdir(), 'mesh-kds-')), 'mesh.db')): Side {
  const store = new SqliteResourceStore({ path });
  const manager = new ResourceManager({ store, mode, ...(zoneName ? { zoneName } : {}) });
  registerCaHooks(manager);
  registerSigningKeyHooks(manager);
  return { store, manager, path };
}

/** Writes a resource as the control plane would, from its wire body. */
export function put(side: Side, type: string, mesh: string, name: string, spec: Record<string, unknown>) {
  const kind = getKind(type);
  return side.manager.apply(kind, { mesh, name }, { type, ...(kind.scope === 'mesh' ? { mesh } : {}), name, ...spec });
}

export async function startGlobal(side: Side, options: Partial<ConstructorParameters<typeof GlobalSyncServer>[0]> = {}) {
  const metrics = new CountingMetrics();
  const server = new GlobalSyncServer({
    manager: side.manager,
    instanceId: randomUUID(),
    clusterId: 'global-store',
    version: VERSION,
    port: 0,
    host: '127.0.0.1',
    maxMessageBytes: 10 * 1024 * 1024,
    zoneInsightFlushMs: 100,
    subscriptionLimit: 10,
    compactFinishedSubscriptions: false,
    idleTimeoutMs: 300_000,
    healthCheckIntervalMs: 0,
    soleInstance: true,
    isLeader: () => true,
    logger: quietLogger,
    metrics,
    ...options,
  });
  const port = await server.start();
  return { server, port, metrics };
}

export function startZone(side: Side, zone: string, port: number, options: Partial<ConstructorParameters<typeof ZoneSyncClient>[0]> = {}) {
  const metrics = new CountingMetrics();
  const client = new ZoneSyncClient({
    manager: side.manager,
    zone,
    globalAddress: `grpc://127.0.0.1:${port}`,
    clusterId: `${zone}-store`,
    version: VERSION,
    config: JSON.stringify({ mode: 'zone', multizone: { zone: { name: zone } } }),
    url: `http://${zone}.example:5681`,
    maxMessageBytes: 10 * 1024 * 1024,
    serveAdminRequest: (path): Promise<Omit<AdminReply, 'requestId'>> => Promise.resolve({ status: 200, contentType: 'application/json', body: JSON.stringify({ zone, path }) }),
    logger: quietLogger,
    metrics,
    backoff: { minMs: 50, maxMs: 200 },
    ...options,
  });
  client.start();
  return { client, metrics };
}
