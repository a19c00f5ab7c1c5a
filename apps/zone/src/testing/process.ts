// Starts a built control-plane binary on free ports with its own work directory, for end-to-end tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
export const BINARIES = {
  'mesh-zone': join(repoRoot, 'apps', 'zone', 'dist', 'main.js'),
  'mesh-global': join(repoRoot, 'apps', 'global', 'dist', 'main.js'),
} as const;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface ControlPlaneProcess {
  url: string;
  httpsUrl: string;
  workDir: string;
  env: Record<string, string>;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export interface StartOptions {
  binary?: keyof typeof BINARIES;
  workDir?: string;
  env?: Record<string, string>;
  /** Reuse these ports (a restart on the same address). */
  ports?: { http: number; https: number; diagnostics: number };
}

/** Starts the binary and waits until its diagnostics server says it is ready. */
export async function startControlPlane(options: StartOptions = {}): Promise<ControlPlaneProcess & { ports: { http: number; https: number; diagnostics: number } }> {
  const ports = options.ports ?? { http: await freePort(), https: await freePort(), diagnostics: await freePort() };
  const workDir = options.workDir ?? mkdtempSync(join(tmpdir(), 'mesh-e2e-'));
  const env: Record<string, string> = {
    MESH_GENERAL_WORK_DIR: workDir,
    MESH_API_SERVER_HTTP_PORT: String(ports.http),
    MESH_API_SERVER_HTTPS_PORT: String(ports.https),
    MESH_DIAGNOSTICS_SERVER_PORT: String(ports.diagnostics),
    MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
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
      const res = await fetch(`http://127.0.0.1:${ports.diagnostics}/ready`);
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
