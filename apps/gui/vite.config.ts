// The GUI's build (docs/gui.md): a single-page app whose files load relative to the `<base>` the
// control plane writes into index.html, so one build serves under any base path.
import { gzipSync } from 'node:zlib';
import vue from '@vitejs/plugin-vue';
import { defineConfig, type Plugin } from 'vite';

/** The most JavaScript, gzipped, that the first page load may fetch. */
const FIRST_LOAD_BUDGET_BYTES = 350 * 1024;

/**
 * Prints each script's gzipped size and what the first load fetches (the entry and the chunks it
 * imports statically), and fails the build when that is over the budget.
 */
function firstLoadBudget(): Plugin {
  return {
    name: 'mesh-first-load-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      const chunks = Object.values(bundle).filter((output) => output.type === 'chunk');
      const gzipped = new Map(chunks.map((chunk) => [chunk.fileName, gzipSync(chunk.code).length]));
      const firstLoad = new Set<string>();
      const visit = (fileName: string) => {
        if (firstLoad.has(fileName)) return;
        firstLoad.add(fileName);
        for (const imported of chunks.find((chunk) => chunk.fileName === fileName)?.imports ?? []) visit(imported);
      };
      for (const chunk of chunks.filter((chunk) => chunk.isEntry)) visit(chunk.fileName);
      const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
      const lines = [...gzipped].sort(([, a], [, b]) => b - a).map(([fileName, size]) => `  ${kb(size).padStart(10)}  ${fileName}${firstLoad.has(fileName) ? '  (first load)' : ''}`);
      const total = [...firstLoad].reduce((sum, fileName) => sum + (gzipped.get(fileName) ?? 0), 0);
      console.log(`\nJavaScript, gzipped:\n${lines.join('\n')}\n  first load: ${kb(total)} of at most ${kb(FIRST_LOAD_BUDGET_BYTES)}\n`);
      if (total > FIRST_LOAD_BUDGET_BYTES) this.error(`the first load needs ${kb(total)} of JavaScript, gzipped: more than ${kb(FIRST_LOAD_BUDGET_BYTES)}`);
    },
  };
}

export default defineConfig({
  base: './',
  plugins: [vue(), firstLoadBudget()],
  build: { target: 'es2022', sourcemap: false, reportCompressedSize: true },
});
