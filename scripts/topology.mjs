#!/usr/bin/env node
// `npm run topology`: a multi-zone deployment on this machine, started by @mesh/testing's
// startTopology (packages/testing): one global and N zones, each a process of its own, data and
// logs in --dir. Prints a line for each control plane, then `topology ready: global :5681,
// zone-1 :5781, ...` once the global sees every zone connected, which scripts and readers wait
// for; if one fails to start, the others are stopped and it prints `topology failed: <why>`.
// Ctrl-C (or SIGTERM) stops them all. See README.md (Multi-zone).
//
//   npm run topology -- --zones 2 [--dir data-topology] [--base-port 5680] [--store sqlite|memory|postgres] [--ingress]
//
// The global serves its API on <base>+1 (5681), diagnostics on <base> (5680) and zone sync on
// <base>+5 (5685); zone i uses the same offsets from <base> + 100 * i (zone-1: API on 5781), and
// serves its proxies on <base> + 100 * i - 2 (zone-1: 5778).
import { parseArgs } from 'node:util';
import { startTopology } from '../packages/testing/dist/index.js';

async function main() {
  const { values } = parseArgs({
    options: {
      zones: { type: 'string', default: '2' },
      dir: { type: 'string', default: 'data-topology' },
      'base-port': { type: 'string', default: '5680' },
      store: { type: 'string', default: 'sqlite' },
      ingress: { type: 'boolean', default: false },
    },
  });
  const zones = Number(values.zones);
  if (!Number.isInteger(zones) || zones < 1 || zones > 50) throw new Error(`--zones: expected a number of zones from 1 to 50, got ${values.zones}`);
  const topology = await startTopology({ zones, dir: values.dir, basePort: Number(values['base-port']), store: values.store, ingress: values.ingress });
  const { global } = topology;
  console.log(`global   API ${global.api}  zone sync ${global.kds}  log ${global.log}`);
  for (const zone of topology.zones) {
    const ingress = zone.ingress ? `  ingress 127.0.0.1:${zone.ingress.port}` : '';
    console.log(`${zone.name.padEnd(8)} API ${zone.api}  proxies ${zone.dpServer}${ingress}  log ${zone.log}`);
  }
  console.log(`topology ready: global :${global.ports.http}, ${topology.zones.map((zone) => `${zone.name} :${zone.ports.http}`).join(', ')}`);
  console.log('Ctrl-C (or SIGTERM) stops them all.');
  await new Promise((stopped) => {
    const stop = () => topology.stop().then(stopped);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

main().catch((error) => {
  console.error(`topology failed: ${error.message}`);
  process.exit(1);
});
