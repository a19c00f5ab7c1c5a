// The store a control plane runs on, from `store.type`: the embedded SQLite file (or memory), or
// PostgreSQL shared by several instances, with the leader election that goes with it.
import { readFileSync } from 'node:fs';
import type { ResourceStore } from '@mesh/store';
import type { PostgresStoreOptions } from '@mesh/store-postgres';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { parseDurationNanos } from '@mesh/model';
import type { Logger } from 'pino';
import type { ControlPlaneConfig } from './config.js';

/** Which instance does the work that must run once (defaults, keys, zone sync toward the global). */
export interface Leadership {
  readonly isLeader: boolean;
  /** Calls `listener` with every change from now on. */
  onChange(listener: (leader: boolean) => void): void;
  stop(): Promise<void>;
}

export interface OpenedStore {
  store: ResourceStore;
  /** Whether the store can serve: for the embedded store while its file is in place; for PostgreSQL while its database is reachable. */
  isAvailable: () => boolean;
  leadership: Leadership;
  /** Where the data is, for logs and the startup banner. */
  location: string;
}

/** The one instance of an embedded store leads for good. */
const SOLE_INSTANCE: Leadership = { isLeader: true, onChange: () => {}, stop: async () => {} };

export async function openStore(config: ControlPlaneConfig, logger: Logger): Promise<OpenedStore> {
  if (config.store.type !== 'postgres') {
    const memory = config.store.type === 'memory';
    const path = memory ? ':memory:' : config.store.sqlite.path;
    const store = new SqliteResourceStore({
      path,
      maxSizeBytes: config.store.sqlite.maxSize,
      // Writes stop for good; what to do is the operator's (docs/api.md, A database file that goes away).
      onFileLost: (what) =>
        logger.error(
          { path },
          `${what}: from now on writes answer 503 and /ready fails, reads are served from memory (the only copy of what was written since the file was last backed up); to recover, stop the control plane, restore the file from a backup and start it again`,
        ),
    });
    return { store, isAvailable: () => store.available, leadership: SOLE_INSTANCE, location: memory ? 'memory' : path };
  }
  const options = postgresOptions(config);
  // Imported only for PostgreSQL: the driver is slow to load, and most control planes run on the embedded store.
  const { connectionConfig, PostgresLeaderElection, PostgresResourceStore } = await import('@mesh/store-postgres');
  const store = await PostgresResourceStore.open(options);
  const listeners: Array<(leader: boolean) => void> = [];
  // Logged here, where the election starts: it may be won before the control plane listens.
  const election = new PostgresLeaderElection({
    connection: connectionConfig(options),
    onChange: (leader) => {
      logger.info({ leader }, leader ? 'leading the instances on this store' : 'following the leader on this store');
      listeners.forEach((listener) => listener(leader));
    },
  });
  election.start();
  const leadership: Leadership = {
    get isLeader() {
      return election.isLeader;
    },
    onChange(listener) {
      listeners.push(listener);
    },
    stop: () => election.stop(),
  };
  const { host, port, dbName } = config.store.postgres;
  return { store, isAvailable: () => store.available, leadership, location: `postgres://${host}:${port}/${dbName}` };
}

const millis = (duration: string, fallback: number) => (parseDurationNanos(duration) ?? fallback * 1e6) / 1e6;

/** The reference's `store.postgres` settings, TLS modes included. */
export function postgresOptions(config: ControlPlaneConfig): PostgresStoreOptions {
  const pg = config.store.postgres;
  const tls = pg.tls;
  const read = (path: string) => (path ? readFileSync(path, 'utf8') : undefined);
  const ssl =
    tls.mode === 'disable'
      ? false
      : {
          rejectUnauthorized: tls.mode !== 'verifyNone',
          ...(read(tls.caPath) ? { ca: read(tls.caPath) } : {}),
          ...(read(tls.certPath) ? { cert: read(tls.certPath) } : {}),
          ...(read(tls.keyPath) ? { key: read(tls.keyPath) } : {}),
          // verifyCa checks the chain but not the host name.
          ...(tls.mode === 'verifyCa' ? { checkServerIdentity: () => undefined } : {}),
          ...(tls.disableSSLSNI ? { servername: '' } : {}),
        };
  return {
    host: pg.host,
    port: pg.port,
    user: pg.user,
    password: pg.password,
    database: pg.dbName,
    connectionTimeoutSeconds: pg.connectionTimeout,
    maxOpenConnections: pg.maxOpenConnections,
    ssl,
    minReconnectIntervalMs: millis(pg.minReconnectInterval, 10_000),
    maxReconnectIntervalMs: millis(pg.maxReconnectInterval, 60_000),
  };
}
