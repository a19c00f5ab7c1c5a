// A private PostgreSQL server for tests: its own data directory and port, started from the
// installed server binaries and removed afterwards. Tests run against a real database.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const BIN_ROOT = '/usr/lib/postgresql';

/** The directory of the newest installed server's binaries (`initdb`, `postgres`), if any. */
export function findPostgresBinaries(): string | undefined {
  const fromEnv = process.env.POSTGRES_BIN_DIR;
  if (fromEnv) return existsSync(join(fromEnv, 'initdb')) ? fromEnv : undefined;
  if (!existsSync(BIN_ROOT)) return undefined;
  const versions = readdirSync(BIN_ROOT)
    .filter((v) => existsSync(join(BIN_ROOT, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(BIN_ROOT, versions[0], 'bin') : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface PostgresServer {
  host: string;
  port: number;
  user: string;
  /** A new empty database on this server. */
  createDatabase(options?: DatabaseOptions): Promise<string>;
  /** Stops the server, keeping its data, so clients lose it; `start` brings it back on the same port. */
  halt(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its data. */
  stop(): Promise<void>;
}

/** PostgreSQL refuses to run as root: the server runs as the `postgres` system user then. */
const asServerUser = (command: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];

/** Starts a server on a free loopback port with trust authentication; resolves once it accepts connections. */
export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = findPostgresBinaries();
  if (!bin) throw new Error('PostgreSQL server binaries not found (install the postgresql package)');
  const dir = mkdtempSync(join(tmpdir(), 'mesh-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const [initdb, initArgs] = asServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'mesh', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  execFileSync(initdb, initArgs, { stdio: 'ignore' });
  const port = await freePort();
  const [postgres, args] = asServerUser(join(bin, 'postgres'), ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'max_connections=200']);
  const admin = { host: '127.0.0.1', port, user: 'mesh', database: 'postgres' };
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(postgres, args, { stdio: 'ignore' });
    await waitUntilAccepting(admin, child);
  };
  const halt = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    // The postmaster itself (not `runuser` in front of it) takes the fast-shutdown signal.
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGINT');
    await exited;
  };
  await start();
  return {
    host: admin.host,
    port,
    user: admin.user,
    createDatabase: (options) => createDatabase(admin, options),
    halt,
    start,
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilAccepting(config: pg.ClientConfig, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`PostgreSQL exited with status ${child.exitCode} while starting`);
    const client = new pg.Client(config);
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error('PostgreSQL did not accept connections within 20 s');
}

export interface DatabaseOptions {
  /**
   * The ICU locale the database sorts text in by default (`en-US`: lower case before upper,
   * punctuation before letters), as a server set up with a language's locale does; the server's
   * own (code-unit order here) when absent.
   */
  icuLocale?: string;
}

/** Creates an empty database on a running server, named uniquely for this process. */
export async function createDatabase(server: { host: string; port: number; user: string }, options: DatabaseOptions = {}): Promise<string> {
  const name = `mesh_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ host: server.host, port: server.port, user: server.user, database: 'postgres' });
  await client.connect();
  try {
    const collation = options.icuLocale ? ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '${options.icuLocale}'` : '';
    await client.query(`CREATE DATABASE "${name}"${collation}`);
  } finally {
    await client.end();
  }
  return name;
}
