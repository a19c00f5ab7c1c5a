// The GUI's component tests: Vue single-file components in a simulated DOM (happy-dom).
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [vue()],
  test: { name: '@mesh/gui', environment: 'happy-dom', include: ['src/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
});
