#!/usr/bin/env node
// Runs every check and test: package dependency direction, lint, typecheck, then all vitest
// projects (the public API reports are checked by one of their tests, tests/api-report.test.ts).
// Writes test-results/vitest.json, from which the closing `tests: N passed, N failed` line comes.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkDependencyDirection } from './check-deps.mjs';
import { lint } from './lint.mjs';
import { pnpm } from './setup.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const report = join(root, 'test-results', 'vitest.json');

const problems = checkDependencyDirection(root);
if (problems.length > 0) {
  for (const problem of problems) console.error(`dependency direction: ${problem}`);
  process.exit(1);
}
lint();
pnpm(['exec', 'turbo', 'run', 'typecheck', '--output-logs=errors-only']);

mkdirSync(dirname(report), { recursive: true });
const vitest = spawnSync(
  'npx',
  ['-y', JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager, 'exec', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`],
  { cwd: root, stdio: 'inherit' },
);

let summary = 'tests: 0 passed, 0 failed';
try {
  const results = JSON.parse(readFileSync(report, 'utf8'));
  summary = `tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed`;
} catch {
  // No report means vitest could not start; the exit status below says so.
}
console.log(summary);
process.exit(vitest.status ?? 1);
