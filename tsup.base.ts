// Build settings shared by every package (libraries) and app (binaries).
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { build, defineConfig } from 'tsup';
import type { Plugin } from 'esbuild';

const common = { format: ['esm' as const], sourcemap: true, clean: true, target: 'node20' };

export const libraryConfig = defineConfig({ ...common, entry: ['src/index.ts'], dts: true });

/** Packages left outside a binary's bundle: better-sqlite3 finds its native addon beside its own files. */
const UNBUNDLED = /^better-sqlite3$/;

/** A relative import of `file` from the bundle's directory. */
const fromBundle = (outDir: string, file: string): string => {
  const path = relative(outDir, file);
  return path.startsWith('..') ? path : `./${path}`;
};

/**
 * Every bundled module keeps its own location: `import.meta.url`, `__filename` and `__dirname` name
 * the file it was bundled from, not the bundle. So a package still finds its own files (migrations,
 * Envoy's message definitions, the GUI, its worker threads), and what stays outside the bundle is
 * required from where its importer resolved it, as it was unbundled.
 */
function keepModuleLocations(outDir: string): Plugin {
  return {
    name: 'keep-module-locations',
    setup(build) {
      build.onResolve({ filter: UNBUNDLED }, ({ path, importer }) => ({ path: fromBundle(outDir, createRequire(importer).resolve(path)), external: true }));
      build.onLoad({ filter: /\.[cm]?js$/ }, async ({ path }) => {
        const source = await readFile(path, 'utf8');
        if (!/import\.meta\.url|\b__(file|dir)name\b/.test(source)) return undefined;
        const fromOutDir = JSON.stringify(fromBundle(outDir, path));
        const contents = source
          .replaceAll('import.meta.url', `__bundledModuleUrl(${fromOutDir})`)
          .replace(/\b__filename\b/g, `__bundledModulePath(${fromOutDir})`)
          .replace(/\b__dirname\b/g, `__bundledModuleDir(${fromOutDir})`);
        return { contents, loader: 'js', resolveDir: dirname(path) };
      });
    },
  };
}

/** The top of the bundle, before esbuild's own code: strict mode, as the modules were, and the locations above from the bundle's own. */
const BUNDLE_PRELUDE = [
  '"use strict";',
  "const { join: __bundleJoin, dirname: __bundleDirname } = require('node:path');",
  "const { pathToFileURL: __bundlePathToFileURL } = require('node:url');",
  'const __bundledModulePath = (path) => __bundleJoin(__dirname, path);',
  'const __bundledModuleUrl = (path) => __bundlePathToFileURL(__bundledModulePath(path)).href;',
  'const __bundledModuleDir = (path) => __bundleDirname(__bundledModulePath(path));',
].join('\n');

export const binaryConfig = defineConfig({ ...common, entry: ['src/main.ts'], banner: { js: '#!/usr/bin/env node' } });

/**
 * A control plane's binary is its launcher (`src/main.ts`, `dist/main.js`) and the control plane it
 * runs (`src/control-plane.ts`) bundled with every dependency into `dist/control-plane.cjs`
 * (docs/architecture.md, Start-up): Node then reads one file at start instead of resolving some 300
 * modules. The bundle is CommonJS because the launcher compiles it as a script, with the engine's
 * code cache (@mesh/control-plane, bundle.ts): Node 20 keeps no compiled code for modules.
 */
export const controlPlaneBinaryConfig = defineConfig({
  ...binaryConfig,
  async onSuccess() {
    const outDir = resolve('dist');
    await build({
      entry: ['src/control-plane.ts'],
      format: ['cjs'],
      target: 'node20',
      platform: 'node',
      sourcemap: true,
      config: false,
      clean: false,
      silent: true,
      noExternal: [/./],
      banner: { js: BUNDLE_PRELUDE },
      esbuildPlugins: [keepModuleLocations(outDir)],
      outDir,
    });
    // The binary's `version` loads the bundle as every start does, so the build leaves its code
    // cache written and the first start reads it too; a build whose bundle cannot load fails here,
    // with the binary's error.
    execFileSync(process.execPath, [resolve(outDir, 'main.js'), 'version'], { stdio: ['ignore', 'ignore', 'pipe'] });
  },
});
