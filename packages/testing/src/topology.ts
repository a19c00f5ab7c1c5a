// A multi-zone deployment on this machine for tests and for `npm run topology`: one global and N
// zones, each a process of its own (control-plane-process.ts) with its own work directory and log
// file, on SQLite files, in memory or on one private PostgreSQL server, the zones synced with the
// global over TLS (trusting the certificate the global generated), optionally a zone ingress
// (mesh-dp running Envoy) in each zone. Ready once the global sees every zone connected.
import { spawn } from 'node:child_process';
import { accessSync, constants, createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { startPostgresServer, type PostgresServer } from '@mesh/store-postgres/testing';
import { type Binary, ControlPlaneProcess, type ControlPlanePorts, freePort, freePorts, portsAt } from './process.js';

export type TopologyStore = 'sqlite' | 'memory' | 'postgres';

export interface TopologyOptions {
  /** How many zones, named zone-1 to zone-N (1 by default). */
  zones?: number;
  /** Where each control plane keeps its resources: a SQLite file in its work directory (the default), memory, or a database of its own on a PostgreSQL server the topology starts. */
  store?: TopologyStore;
  /** A zone ingress in each zone (`mesh-dp --proxy-type ingress` running Envoy), so that proxies reach other zones' services. */
  ingress?: boolean;
  /** The Envoy binary the ingresses run: `envoy` on PATH by default. */
  envoy?: string;
  /** Work directories and logs (`global/`, `global.log`, `zone-1/`, `zone-1.log`, ...), kept after `stop`; by default a new temporary directory that `stop` removes. */
  dir?: string;
  /** Fixed ports as `npm run topology -- --base-port` lays them out (the global's API on base+1, each zone 100 further); free ports by default. */
  basePort?: number;
  /** More MESH_* variables of the global. */
  globalEnv?: Record<string, string>;
  /** More MESH_* variables of a zone. */
  zoneEnv?: (name: string) => Record<string, string>;
  /** Options of Node on the command line of a control plane (`global`, `zone-1`, ...), such as `--cpu-prof`. */
  nodeOptions?: (name: string) => readonly string[];
  /** How long a control plane may take to become ready, and the zones to connect (120 s by default: a machine whose cores are busy starts them slowly). */
  timeoutMs?: number;
}

/** One control plane of a topology. */
export class TopologyControlPlane {
  /** An admin user token of this control plane (GlobalSecret `admin-user-token`), for a client that is not on this machine's loopback. */
  adminToken = '';

  constructor(
    /** `global`, `zone-1`, ... */
    readonly name: string,
    private readonly process: ControlPlaneProcess,
  ) {}

  get ports(): ControlPlanePorts {
    return this.process.options.ports;
  }

  /** The API over HTTP: `http://127.0.0.1:<port>`. */
  get api(): string {
    return `http://127.0.0.1:${this.ports.http}`;
  }

  /** The API over TLS, with the certificate in `caCertFile`. */
  get apiHttps(): string {
    return `https://127.0.0.1:${this.ports.https}`;
  }

  /** `/ready`, `/healthy`, `/metrics`. */
  get diagnostics(): string {
    return `http://127.0.0.1:${this.ports.diagnostics}`;
  }

  get workDir(): string {
    return this.process.options.workDir;
  }

  /** The file its output goes to. */
  get log(): string {
    return this.process.options.log;
  }

  /** The MESH_* variables it runs with. */
  get env(): Record<string, string> {
    return this.process.env;
  }

  /** The certificate its TLS servers present (API, data plane server, zone sync), which it generated. */
  get caCertFile(): string {
    return join(this.workDir, 'mesh-cp.crt');
  }

  /** Its process id while it runs. */
  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Stops its process (SIGTERM: gracefully; SIGKILL: as a crash) and resolves once it has exited. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    return this.process.stop(signal);
  }

  /** Starts it again on the same ports, work directory and store; resolves once it is ready (a zone: connected). */
  start(): Promise<void> {
    return this.process.start();
  }
}

export class GlobalControlPlane extends TopologyControlPlane {
  /** Its zone sync server, a zone's `multizone.zone.globalAddress`: `grpcs://127.0.0.1:<port>`. */
  get kds(): string {
    return `grpcs://127.0.0.1:${this.ports.kds}`;
  }
}

export class ZoneControlPlane extends TopologyControlPlane {
  /** A zone token the global issued for this zone (scopes cp, ingress and egress): what a zone ingress or egress presents. */
  zoneToken = '';
  /** Its zone ingress, with `ingress: true`. */
  ingress: ZoneIngressProcess | undefined;

  /** Its data plane server, `mesh-dp --cp-address` (TLS, with the certificate in `caCertFile`). */
  get dpServer(): string {
    return `https://127.0.0.1:${this.ports.dp}`;
  }

  /** A dataplane token for a proxy of this zone (`mesh-dp --dataplane-token-file`). */
  async dataplaneToken(dataplane: { name: string; mesh?: string; tags?: Record<string, string[]> }): Promise<string> {
    return request(this, 'POST', '/tokens/dataplane', { mesh: 'default', ...dataplane, validFor: '24h' });
  }
}

/** A zone ingress: `mesh-dp` registering ZoneIngress `ingress` and running Envoy. */
export interface ZoneIngressProcess {
  /** The port it takes traffic from other zones on (127.0.0.1, advertised as such). */
  readonly port: number;
  /** Envoy's admin port. */
  readonly adminPort: number;
  stop(): Promise<void>;
}

export interface Topology {
  global: GlobalControlPlane;
  zones: ZoneControlPlane[];
  /** Where work directories and logs are. */
  dir: string;
  /** The PostgreSQL server, with `store: 'postgres'`. */
  postgres: PostgresServer | undefined;
  /** Stops the ingresses, the zones, the global and PostgreSQL; removes a temporary `dir`. */
  stop(): Promise<void>;
}

/** Answers a request to a control plane's API with the body, or fails with the status. */
async function request(cp: TopologyControlPlane, method: string, path: string, body?: unknown): Promise<string> {
  const res = await fetch(`${cp.api}${path}`, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${cp.name}: ${method} ${path}: ${res.status} ${text}`);
  return text;
}

/**
 * The admin token the leader stores at the first start. On PostgreSQL an instance may win the
 * election after it is ready, and stores the token then: read until it is there.
 */
async function readAdminToken(cp: TopologyControlPlane, timeoutMs: number): Promise<string> {
  let token = '';
  await waitFor(
    async () => {
      const secret = JSON.parse(await request(cp, 'GET', '/global-secrets/admin-user-token')) as { data: string };
      token = Buffer.from(secret.data, 'base64').toString();
      return true;
    },
    () => `${cp.name}: no admin token (GlobalSecret admin-user-token) after ${timeoutMs} ms`,
    timeoutMs,
  );
  return token;
}

/** Polls `check` until it holds; fails with `what` after `timeoutMs`. */
async function waitFor(check: () => Promise<boolean>, what: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(what());
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Resolves once the global lists every one of these zones as active: a zone is ready once it is
 * connected, but the global marks it active when its insight is written, a moment later.
 */
async function waitForActiveZones(global: GlobalControlPlane, names: readonly string[], timeoutMs: number): Promise<void> {
  let active = new Set<string>();
  await waitFor(
    async () => {
      const statuses = JSON.parse(await request(global, 'GET', '/status/zones')) as Array<{ name: string; active: boolean }>;
      active = new Set(statuses.filter((zone) => zone.active).map((zone) => zone.name));
      return names.every((name) => active.has(name));
    },
    () => `the global did not see zone(s) ${names.filter((name) => !active.has(name)).join(', ')} connected`,
    timeoutMs,
  );
}

const INGRESS_NAME = 'ingress';

/** The path of an executable: as given when it names a path, else the first on PATH. */
function executablePath(command: string): string {
  const candidates = command.includes('/') ? [command] : (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return resolve(candidate);
    } catch {
      // not this one
    }
  }
  throw new Error(`ingress: ${command} is not an executable file, nor on PATH (install Envoy, or give its path as envoy)`);
}

/** Starts `mesh-dp` for the zone's ingress and resolves once the zone has it online. */
async function startIngress(zone: ZoneControlPlane, envoy: string, dir: string, timeoutMs: number): Promise<ZoneIngressProcess> {
  const meshDp = createRequire(import.meta.url).resolve('@mesh/dp');
  const configDir = join(dir, `${zone.name}-ingress`);
  mkdirSync(configDir, { recursive: true });
  const port = await freePort();
  const adminPort = await freePort();
  const definition = join(configDir, 'ingress.yaml');
  const tokenFile = join(configDir, 'token');
  writeFileSync(definition, `type: ZoneIngress\nname: ${INGRESS_NAME}\nnetworking:\n  address: 127.0.0.1\n  port: ${port}\n  advertisedAddress: 127.0.0.1\n  advertisedPort: ${port}\n`);
  writeFileSync(tokenFile, zone.zoneToken);
  const log = join(dir, `${zone.name}-ingress.log`);
  const args = ['run', '--proxy-type', 'ingress', '--cp-address', zone.dpServer, '--ca-cert-file', zone.caCertFile, '--dataplane-file', definition, '--dataplane-token-file', tokenFile];
  const child = spawn(process.execPath, [meshDp, ...args, '--admin-port', String(adminPort), '--binary-path', envoy, '--config-dir', configDir, '--drain-time', '0s', '--concurrency', '1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const file = createWriteStream(log, { flags: 'a' });
  child.stdout.pipe(file, { end: false });
  child.stderr.pipe(file, { end: false });
  const exited = new Promise<void>((done) => child.once('close', () => file.end(done)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error('exited');
        const overview = JSON.parse(await request(zone, 'GET', `/zoneingresses+insights/${INGRESS_NAME}`)) as { zoneIngressInsight?: { subscriptions?: Array<{ disconnectTime?: string }> } };
        const connected = (overview.zoneIngressInsight?.subscriptions ?? []).some((subscription) => subscription.disconnectTime === undefined);
        // Envoy is ready once it holds the configuration the zone sent it.
        return connected && (await fetch(`http://127.0.0.1:${adminPort}/ready`)).ok;
      },
      () => `the zone ingress of ${zone.name} did not connect; see ${log}`,
      timeoutMs,
    );
  } catch (error) {
    await stop();
    throw child.exitCode !== null ? new Error(`the zone ingress of ${zone.name} exited with ${child.exitCode}; see ${log}`) : error;
  }
  return { port, adminPort, stop };
}

/** The settings that make a control plane keep its resources in `store`. */
async function storeEnv(store: TopologyStore, postgres: PostgresServer | undefined): Promise<Record<string, string>> {
  if (store === 'memory') return { MESH_STORE_TYPE: 'memory' };
  if (store === 'sqlite') return {};
  return {
    MESH_STORE_TYPE: 'postgres',
    MESH_STORE_POSTGRES_HOST: postgres!.host,
    MESH_STORE_POSTGRES_PORT: String(postgres!.port),
    MESH_STORE_POSTGRES_USER: postgres!.user,
    MESH_STORE_POSTGRES_PASSWORD: '',
    MESH_STORE_POSTGRES_DB_NAME: await postgres!.createDatabase(),
  };
}

/** Waits for every start to settle, so that none is left starting when another fails; then fails with the first failure. */
async function allStarted(starts: ReadonlyArray<Promise<unknown>>): Promise<void> {
  const failed = (await Promise.allSettled(starts)).find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Starts a global and `zones` zones, each a process running what the mesh-global and mesh-zone
 * binaries run, and resolves once the global sees every zone connected (and, with `ingress`, every
 * zone has its ingress connected). When one part cannot start, what was started is stopped and the
 * error says which part and where its log is.
 */
export async function startTopology(options: TopologyOptions = {}): Promise<Topology> {
  const { zones: zoneCount = 1, store = 'sqlite', ingress = false, timeoutMs = 120_000 } = options;
  if (!Number.isInteger(zoneCount) || zoneCount < 0) throw new Error(`zones: expected a number of zones, got ${zoneCount}`);
  if (!['sqlite', 'memory', 'postgres'].includes(store)) throw new Error(`store: expected sqlite, memory or postgres, got ${store}`);
  const envoy = ingress ? executablePath(options.envoy ?? 'envoy') : '';
  const temporary = options.dir === undefined;
  const dir = temporary ? mkdtempSync(join(tmpdir(), 'mesh-topology-')) : resolve(options.dir!);
  mkdirSync(dir, { recursive: true });
  const ports = async (index: number) => (options.basePort === undefined ? freePorts() : portsAt(options.basePort + 100 * index));
  const member = async (name: string, binary: Binary, index: number, env: Record<string, string>) =>
    new ControlPlaneProcess({ binary, workDir: join(dir, name), log: join(dir, `${name}.log`), ports: await ports(index), env, timeoutMs, nodeOptions: options.nodeOptions?.(name) ?? [] });

  let postgres: PostgresServer | undefined;
  const started: TopologyControlPlane[] = [];
  const ingresses: ZoneIngressProcess[] = [];
  const stopAll = async () => {
    await Promise.all(ingresses.map((proxy) => proxy.stop()));
    await Promise.all(started.filter((cp) => cp.name !== 'global').map((cp) => cp.stop()));
    await Promise.all(started.filter((cp) => cp.name === 'global').map((cp) => cp.stop()));
    await postgres?.stop();
  };
  const stop = async () => {
    await stopAll();
    if (temporary) rmSync(dir, { recursive: true, force: true });
  };

  try {
    if (store === 'postgres') postgres = await startPostgresServer();
    const global = new GlobalControlPlane('global', await member('global', 'mesh-global', 0, { ...(await storeEnv(store, postgres)), ...options.globalEnv }));
    started.push(global);
    await global.start();
    const names = Array.from({ length: zoneCount }, (_, i) => `zone-${i + 1}`);
    const zones = await Promise.all(
      names.map(async (name, i) => {
        const env = {
          MESH_MULTIZONE_ZONE_NAME: name,
          MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: global.kds,
          MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: global.caCertFile,
          ...(await storeEnv(store, postgres)),
          ...options.zoneEnv?.(name),
        };
        const zone = new ZoneControlPlane(name, await member(name, 'mesh-zone', i + 1, env));
        started.push(zone);
        return zone;
      }),
    );
    await allStarted(zones.map((zone) => zone.start()));
    await waitForActiveZones(global, names, timeoutMs);
    for (const cp of started) cp.adminToken = await readAdminToken(cp, timeoutMs);
    for (const zone of zones) zone.zoneToken = await request(global, 'POST', '/tokens/zone', { zone: zone.name, scope: ['cp', 'ingress', 'egress'], validFor: '24h' });
    if (ingress) {
      await allStarted(
        zones.map(async (zone) => {
          zone.ingress = await startIngress(zone, envoy, dir, timeoutMs);
          ingresses.push(zone.ingress);
        }),
      );
    }
    return { global, zones, dir, postgres, stop };
  } catch (error) {
    // The logs stay for the error to point to.
    await stopAll();
    throw error;
  }
}
