#!/usr/bin/env node
// Lints the sources of every package and app with eslint.config.mjs. Type-aware rules read the other
// packages' built types (dist/*.d.ts), so it runs after the build. The cache limits a second run to
// the files that changed; a file whose imports changed but which did not is not linted again (a
// clean clone, as in CI, lints everything).
import { fileURLToPath } from 'node:url';
import { pnpm } from './setup.mjs';

export function lint() {
  pnpm(['exec', 'eslint', '--cache', '--cache-location', 'node_modules/.cache/eslint/', '--cache-strategy', 'content', 'packages/*/src/**/*.ts', 'apps/*/src/**/*.ts']);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) lint();
