// One control plane of a topology as a process of its own: started on chosen ports with its own
// work directory and log file, ready once its diagnostics server says so, stopped by a signal.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The built entry each process runs, found from the build (`dist/`) and from the sources the package's own tests import alike. */
const ENTRY = fileURLToPath(new URL('../dist/control-plane-process.js', import.meta.url));

/** The ports of one control plane. */
export interface ControlPlanePorts {
  http: number;
  https: number;
  diagnostics: number;
  /** The data plane server (a zone's proxies connect to it). */
  dp: number;
  /** The zone sync server (a global's zones connect to it). */
  kds: number;
}

/** The ports of a control plane whose ports start at `base`, as `npm run topology -- --base-port` lays them out. */
export const portsAt = (base: number): ControlPlanePorts => ({ dp: base - 2, diagnostics: base, http: base + 1, https: base + 2, kds: base + 5 });

const portFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });

/**
 * Test files run in parallel workers (the repository's vitest.config.ts), and a port probed free
 * here is bound by a child process only later. Each worker therefore takes ports from its own range
 * below the system's ephemeral ports (32768 and up on Linux), which listeners on port 0 and
 * outgoing connections draw from: no other worker, and no port the system hands out, can take it
 * in between. A process starts at a random place in its range, so that two test runs at once
 * (two checkouts) seldom meet. `freeBasePort` draws from below these ranges.
 */
const PORTS_PER_WORKER = 2_500;
const FIRST_WORKER_PORT = 20_000;
const WORKER_RANGES = 5;
const rangeStart = FIRST_WORKER_PORT + ((Number(process.env.VITEST_POOL_ID ?? '1') - 1) % WORKER_RANGES) * PORTS_PER_WORKER;
let probed = 0;
const firstOffset = Math.floor(Math.random() * PORTS_PER_WORKER);

/** A free port, never one this process was given before (ports taken in a row for one proxy must differ). */
export async function freePort(): Promise<number> {
  while (probed < PORTS_PER_WORKER) {
    const port = rangeStart + ((firstOffset + probed++) % PORTS_PER_WORKER);
    if (await portFree(port)) return port;
  }
  throw new Error(`every port from ${rangeStart} to ${rangeStart + PORTS_PER_WORKER - 1} of this worker is taken`);
}

/**
 * A base port (`portsAt`) whose ports for a global and `zones` zones are all free, from 10000 up to
 * the ranges of `freePort` (20000): below the range the system hands out to outgoing connections
 * (which would take them at any moment).
 */
export async function freeBasePort(zones: number): Promise<number> {
  const { dp, diagnostics, http, https, kds } = portsAt(0);
  const offsets = [dp, diagnostics, http, https, kds];
  for (;;) {
    const base = 10_000 + 100 * Math.floor(Math.random() * (90 - zones));
    const ports = Array.from({ length: zones + 1 }, (_, zone) => offsets.map((offset) => base + 100 * zone + offset)).flat();
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
}

/** A free port for each server of a control plane. */
export async function freePorts(): Promise<ControlPlanePorts> {
  return { http: await freePort(), https: await freePort(), diagnostics: await freePort(), dp: await freePort(), kds: await freePort() };
}

export type Binary = 'mesh-global' | 'mesh-zone';

export interface ProcessOptions {
  binary: Binary;
  workDir: string;
  ports: ControlPlanePorts;
  /** More MESH_* variables (they win over the ports'). */
  env?: Record<string, string>;
  /** The file its standard output and error are appended to. */
  log: string;
  /** How long it may take to become ready (120 s by default: a machine whose cores are busy starts it slowly). */
  timeoutMs?: number;
  /** Options of Node on its command line, such as `--cpu-prof` (which NODE_OPTIONS does not take). */
  nodeOptions?: readonly string[];
}

/** A control plane process, which can be stopped and started again on the same ports and work directory. */
export class ControlPlaneProcess {
  readonly env: Record<string, string>;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(readonly options: ProcessOptions) {
    const { ports, workDir } = options;
    this.env = {
      MESH_GENERAL_WORK_DIR: workDir,
      MESH_API_SERVER_HTTP_PORT: String(ports.http),
      MESH_API_SERVER_HTTPS_PORT: String(ports.https),
      MESH_DIAGNOSTICS_SERVER_PORT: String(ports.diagnostics),
      MESH_DP_SERVER_PORT: String(ports.dp),
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: String(ports.kds),
      // Prometheus's discovery server, which tests do not use, on any free port.
      MESH_MONITORING_ASSIGNMENT_SERVER_PORT: '0',
      ...options.env,
    };
  }

  /** Its process id while it runs. */
  get pid(): number | undefined {
    return this.running ? this.child!.pid : undefined;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts it and resolves once it is ready (a zone: connected to its global); rejects, stopping it, when it exits or is not ready in time. */
  async start(): Promise<void> {
    if (this.running) return;
    const { binary, workDir, log, ports, timeoutMs = 120_000, nodeOptions = [] } = this.options;
    mkdirSync(workDir, { recursive: true });
    const child = spawn(process.execPath, [...nodeOptions, ENTRY, binary], { env: { PATH: process.env.PATH ?? '', ...this.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const file = createWriteStream(log, { flags: 'a' });
    child.stdout.pipe(file, { end: false });
    child.stderr.pipe(file, { end: false });
    // Resolves once it has exited and everything it wrote is in its log.
    this.exited = new Promise((resolve) => child.once('close', () => file.end(resolve)));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) throw new Error(`${binary === 'mesh-global' ? 'global' : 'zone'} in ${workDir} exited with ${child.exitCode ?? child.signalCode}; see ${log}`);
      try {
        if ((await fetch(`http://127.0.0.1:${ports.diagnostics}/ready`)).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        await this.stop('SIGTERM', 10_000);
        throw new Error(`${binary === 'mesh-global' ? 'global' : 'zone'} in ${workDir} did not become ready within ${timeoutMs} ms; see ${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Sends `signal` (SIGTERM: a graceful stop) and resolves once it has exited; SIGKILL after `graceMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 30_000): Promise<void> {
    const child = this.child;
    if (child && this.running) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    await this.exited;
  }
}
