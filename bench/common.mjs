// What every benchmark needs: free loopback ports, child processes that die with the benchmark,
// the zone binary started on free ports, and quantiles of measured times.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ZONE_BINARY = join(dirname(fileURLToPath(import.meta.url)), '..', 'apps', 'zone', 'dist', 'main.js');

/** A port free on the loopback address at the time of asking. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Child processes to kill when the benchmark exits, however it ends. */
export const children = new Set();
process.on('exit', () => children.forEach((child) => child.exitCode === null && child.kill('SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The environment of the zone binary on a work directory and ports, nothing else inherited. */
export function zoneEnv(workDir, ports) {
  return {
    PATH: process.env.PATH ?? '',
    MESH_GENERAL_WORK_DIR: workDir,
    MESH_API_SERVER_HTTP_PORT: String(ports.http),
    MESH_API_SERVER_HTTPS_PORT: String(ports.https),
    MESH_DIAGNOSTICS_SERVER_PORT: String(ports.diagnostics),
    MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
    // Every instance's data plane server on a free port (several run at once).
    MESH_DP_SERVER_PORT: '0',
    MESH_MONITORING_ASSIGNMENT_SERVER_PORT: '0',
  };
}

/** The built zone binary on free ports with a fresh work directory and `env`, once it is ready. */
export async function startZone(env = {}) {
  const ports = { http: await freePort(), https: await freePort(), diagnostics: await freePort() };
  const child = spawn(process.execPath, [ZONE_BINARY], {
    env: { ...zoneEnv(mkdtempSync(join(tmpdir(), 'mesh-bench-')), ports), ...env },
    stdio: 'ignore',
  });
  children.add(child);
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${ports.diagnostics}/ready`)).ok) return { url: `http://127.0.0.1:${ports.http}`, child };
    } catch {}
    await sleep(100);
  }
  throw new Error('control plane did not become ready');
}

/** The q-quantile (0 to 1) of values sorted in ascending order. */
export const quantile = (sorted, q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
