#!/usr/bin/env node
// Starts a multi-zone deployment on this machine: one global control plane and N zone control
// planes, each a separate process with its own data directory and log file, the zones synced
// with the global over its zone sync port (TLS, trusting the certificate the global generated).
// Ctrl-C stops them all. See README.md (Multi-zone on one machine).
//
//   npm run topology -- --zones 2 [--dir data-topology] [--base-port 5680]
//
// The global serves its API on <base>+1 (5681), diagnostics on <base> (5680) and zone sync on
// <base>+5 (5685); zone i uses the same offsets from <base> + 100 * i (zone-1: API on 5781), and
// serves its proxies on <base> + 100 * i - 2 (zone-1: 5778).
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BINARIES = { global: join(root, 'apps', 'global', 'dist', 'main.js'), zone: join(root, 'apps', 'zone', 'dist', 'main.js') };

/** The ports of a control plane whose ports start at `base`. */
export const portsAt = (base) => ({ dp: base - 2, diagnostics: base, http: base + 1, https: base + 2, kds: base + 5 });

/**
 * Starts one control plane and resolves once it is ready (a zone: connected to its global).
 * `log` is a file its output goes to, or 'inherit'/'ignore'.
 */
export async function startProcess({ binary, workDir, ports, env = {}, log = 'ignore', timeoutMs = 60_000 }) {
  mkdirSync(workDir, { recursive: true });
  const child = spawn(process.execPath, [BINARIES[binary]], {
    env: {
      PATH: process.env.PATH ?? '',
      MESH_GENERAL_WORK_DIR: workDir,
      MESH_API_SERVER_HTTP_PORT: String(ports.http),
      MESH_API_SERVER_HTTPS_PORT: String(ports.https),
      MESH_DIAGNOSTICS_SERVER_PORT: String(ports.diagnostics),
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: String(ports.kds),
      // Zones serve proxies too: each data plane server on a free port unless told.
      MESH_DP_SERVER_PORT: String(ports.dp ?? 0),
      // The monitoring assignment server too: a global and its zones share the host.
      MESH_MONITORING_ASSIGNMENT_SERVER_PORT: String(ports.mads ?? 0),
      ...env,
    },
    stdio: ['ignore', log === 'inherit' ? 'inherit' : 'pipe', log === 'inherit' ? 'inherit' : 'pipe'],
  });
  if (log !== 'inherit' && log !== 'ignore') {
    const file = createWriteStream(log, { flags: 'a' });
    child.stdout.pipe(file);
    child.stderr.pipe(file);
  } else if (log === 'ignore') {
    child.stdout?.resume();
    child.stderr?.resume();
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${binary} in ${workDir} exited with ${child.exitCode}${typeof log === 'string' && log.includes('/') ? `; see ${log}` : ''}`);
    try {
      if ((await fetch(`http://127.0.0.1:${ports.diagnostics}/ready`)).ok) return { child, url: `http://127.0.0.1:${ports.http}`, ports, workDir };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${binary} in ${workDir} did not become ready`);
}

/** The settings of a zone of the global whose work directory and sync port are these. */
export const zoneEnv = (name, global) => ({
  MESH_MULTIZONE_ZONE_NAME: name,
  MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: `grpcs://127.0.0.1:${global.ports.kds}`,
  MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: join(global.workDir, 'mesh-cp.crt'),
});

async function main() {
  const { values } = parseArgs({
    options: { zones: { type: 'string', default: '2' }, dir: { type: 'string', default: 'data-topology' }, 'base-port': { type: 'string', default: '5680' } },
  });
  const zones = Number(values.zones);
  const base = Number(values['base-port']);
  if (!Number.isInteger(zones) || zones < 1 || zones > 50) throw new Error(`--zones: expected a number of zones from 1 to 50, got ${values.zones}`);
  const dir = resolve(values.dir);
  const started = [];
  const stopAll = () => started.forEach(({ child }) => child.exitCode === null && child.kill('SIGTERM'));
  process.on('SIGINT', stopAll);
  process.on('SIGTERM', stopAll);
  try {
    const global = await startProcess({ binary: 'global', workDir: join(dir, 'global'), ports: portsAt(base), log: join(dir, 'global.log') });
    started.push(global);
    console.log(`global   API ${global.url}  zone sync grpcs://127.0.0.1:${global.ports.kds}  log ${join(dir, 'global.log')}`);
    await Promise.all(
      Array.from({ length: zones }, async (_, i) => {
        const name = `zone-${i + 1}`;
        const zone = await startProcess({ binary: 'zone', workDir: join(dir, name), ports: portsAt(base + 100 * (i + 1)), env: zoneEnv(name, global), log: join(dir, `${name}.log`) });
        started.push(zone);
        console.log(`${name.padEnd(8)} API ${zone.url}  proxies https://127.0.0.1:${zone.ports.dp}  log ${join(dir, `${name}.log`)}`);
      }),
    );
  } catch (error) {
    stopAll();
    throw error;
  }
  console.log(`\n${zones} zone(s) synced with the global; Ctrl-C stops them all.`);
  await Promise.all(started.map(({ child }) => new Promise((done) => (child.exitCode !== null ? done() : child.once('exit', done)))));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
