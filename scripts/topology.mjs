#!/usr/bin/env node
// Starts a multi-zone deployment on this machine: one global control plane and N zone control
// planes, each a separate process with its own data directory and log file, the zones synced
// with the global over its zone sync port (TLS, trusting the certificate the global generated).
// Once the global sees every zone connected it prints one line, `topology ready: global :5681,
// zone-1 :5781, ...`, which scripts and readers wait for; if one fails to start, it stops the
// others and prints `topology failed: <why>`. Ctrl-C stops them all. See README.md (Multi-zone).
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

/**
 * Resolves once the global lists every one of these zones as active: a zone is ready once it is
 * connected, but the global marks it active when its insight is written, a moment later.
 */
async function waitForActiveZones(global, names, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const statuses = await fetch(`${global.url}/status/zones`).then((res) => res.json(), () => []);
    const active = new Set(statuses.filter((zone) => zone.active).map((zone) => zone.name));
    if (names.every((name) => active.has(name))) return;
    if (Date.now() > deadline) throw new Error(`the global did not see zone(s) ${names.filter((name) => !active.has(name)).join(', ')} connected`);
    await new Promise((r) => setTimeout(r, 200));
  }
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
  const running = ({ child }) => child.exitCode === null && child.signalCode === null;
  const stopAll = () => started.filter(running).forEach(({ child }) => child.kill('SIGTERM'));
  // Waiting keeps their output flowing to their logs while they shut down.
  const allExited = () => Promise.all(started.filter(running).map(({ child }) => new Promise((done) => child.once('exit', done))));
  process.on('SIGINT', stopAll);
  process.on('SIGTERM', stopAll);
  try {
    const global = await startProcess({ binary: 'global', workDir: join(dir, 'global'), ports: portsAt(base), log: join(dir, 'global.log') });
    started.push(global);
    console.log(`global   API ${global.url}  zone sync grpcs://127.0.0.1:${global.ports.kds}  log ${join(dir, 'global.log')}`);
    const names = Array.from({ length: zones }, (_, i) => `zone-${i + 1}`);
    // Every zone settles, started or failed, so that none is left running when another fails.
    const results = await Promise.allSettled(
      names.map(async (name, i) => {
        const zone = await startProcess({ binary: 'zone', workDir: join(dir, name), ports: portsAt(base + 100 * (i + 1)), env: zoneEnv(name, global), log: join(dir, `${name}.log`) });
        started.push(zone);
        console.log(`${name.padEnd(8)} API ${zone.url}  proxies https://127.0.0.1:${zone.ports.dp}  log ${join(dir, `${name}.log`)}`);
        return zone;
      }),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    await waitForActiveZones(global, names);
    console.log(`topology ready: global :${global.ports.http}, ${names.map((name, i) => `${name} :${results[i].value.ports.http}`).join(', ')}`);
  } catch (error) {
    stopAll();
    await allExited();
    throw error;
  }
  console.log('Ctrl-C (or SIGTERM) stops them all.');
  await allExited();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`topology failed: ${error.message}`);
    process.exit(1);
  });
}
