#!/usr/bin/env node
// Generates the reference documentation of the public packages with TypeDoc, from their sources,
// into api-docs/ (not checked in): open api-docs/index.html.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Application } from 'typedoc';
import { PUBLIC_PACKAGES } from './public-packages.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'api-docs');

const app = await Application.bootstrapWithPlugins({
  name: 'mesh control plane libraries',
  entryPointStrategy: 'packages',
  entryPoints: PUBLIC_PACKAGES.map((folder) => join(root, folder)),
  // The sources, not the built declarations: the comments and the places they were written.
  packageOptions: { entryPoints: ['src/index.ts'] },
  readme: 'none',
  out,
  // Types reached through the API but not exported by name are documented where they are used.
  validation: { notExported: false },
  logLevel: 'Warn',
});
const project = await app.convert();
if (!project || app.logger.hasErrors()) process.exit(1);
await app.generateOutputs(project);
console.log(`reference documentation written to ${join(out, 'index.html')}`);
