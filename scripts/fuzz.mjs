#!/usr/bin/env node
// Runs the fuzz of the write and token endpoints (apps/zone/src/fuzz.e2e.test.ts) against the built
// zone binary with more cases than the test suite does: `npm run fuzz -- --runs 20000 [--seed N]`.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '10000' }, seed: { type: 'string' } } });
if (!/^\d+$/.test(values.runs) || (values.seed !== undefined && !/^-?\d+$/.test(values.seed))) {
  console.error('usage: npm run fuzz -- [--runs N] [--seed N]');
  process.exit(2);
}
const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const run = spawnSync('npx', ['-y', packageManager, 'exec', 'vitest', 'run', '--project', '@mesh/zone', 'src/fuzz.e2e.test.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, FUZZ_RUNS: values.runs, ...(values.seed !== undefined ? { FUZZ_SEED: values.seed } : {}) },
});
process.exit(run.status ?? 1);
