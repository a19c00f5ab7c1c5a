// Starts a built control-plane binary on free ports with its own work directory, for end-to-end tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@mesh/testing';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
export const BINARIES = {
  'mesh-zone': join(repoRoot, 'apps', 'zone', 'dist', 'main.js'),
  'mesh-global': join(repoRoot, 'apps', 'global', 'dist', 'main.js'),
} as const;

// One source of ports for every helper of a test process, so that none hands out a port another did.
export { freePort } from '@mesh/testing';

export interface ControlPlaneProcess {
  pid: number;
  url: string;
  httpsUrl: string;
  workDir: string;
  env: Record<string, string>;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export interface Ports {
  http: number;
  https: number;
  diagnostics: number;
  /** The zone sync port of a global. */
  kds: number;
}

export interface StartOptions {
  binary?: keyof typeof BINARIES;
  workDir?: string;
  env?: Record<string, string>;
  /** Reuse these ports (a restart on the same address). */
  ports?: Ports;
  /** Wait for readiness (a zone is ready once connected to its global); otherwise only for the API. */
  waitUntilReady?: boolean;
}

/** Starts the binary and waits until its diagnostics server says it is ready. */
export async function startControlPlane(options: StartOptions = {}): Promise<ControlPlaneProcess & { ports: Ports }> {
  const ports = options.ports ?? { http: await freePort(), https: await freePort(), diagnostics: await freePort(), kds: await freePort() };
  const workDir = options.workDir ?? mkdtempSync(join(tmpdir(), 'mesh-e2e-'));
  const env: Record<string, string> = {
    MESH_GENERAL_WORK_DIR: workDir,
    MESH_API_SERVER_HTTP_PORT: String(ports.http),
    MESH_API_SERVER_HTTPS_PORT: String(ports.https),
    MESH_DIAGNOSTICS_SERVER_PORT: String(ports.diagnostics),
    MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: String(ports.kds),
    // The data plane server listens on any free port unless a test picks one (docs/xds.md).
    MESH_DP_SERVER_PORT: '0',
    MESH_MONITORING_ASSIGNMENT_SERVER_PORT: '0',
    ...options.env,
  };
  const child: ChildProcess = spawn(process.execPath, [BINARIES[options.binary ?? 'mesh-zone']], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`control plane exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(options.waitUntilReady === false ? `http://127.0.0.1:${ports.http}/` : `http://127.0.0.1:${ports.diagnostics}/ready`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`control plane did not become ready:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    pid: child.pid!,
    url: `http://127.0.0.1:${ports.http}`,
    httpsUrl: `https://127.0.0.1:${ports.https}`,
    workDir,
    env,
    ports,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * The settings of a zone control plane of this global: its name, the global's sync address (TLS,
 * trusting the certificate the global generated into its work directory).
 */
export function zoneOf(global: Pick<ControlPlaneProcess, 'workDir'> & { ports: Ports }, name: string): Record<string, string> {
  return {
    MESH_MULTIZONE_ZONE_NAME: name,
    MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: `grpcs://127.0.0.1:${global.ports.kds}`,
    MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: join(global.workDir, 'mesh-cp.crt'),
  };
}
