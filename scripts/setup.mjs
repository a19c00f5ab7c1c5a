#!/usr/bin/env node
// Installs dependencies with the pinned pnpm and builds every package. Needs only Node 20 and npm.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  console.error(`Node.js 20 or newer is required (found ${process.versions.node}).`);
  process.exit(1);
}
const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Runs the pinned pnpm through npx, so nothing has to be installed globally. */
export function pnpm(args, options = {}) {
  execFileSync('npx', ['-y', packageManager, ...args], { cwd: root, stdio: 'inherit', ...options });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  pnpm(['install', '--frozen-lockfile', '--reporter=append-only']);
  pnpm(['exec', 'turbo', 'run', 'build', '--output-logs=errors-only']);
}
