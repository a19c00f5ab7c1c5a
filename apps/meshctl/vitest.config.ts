import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: '@mesh/meshctl',
    // The end-to-end tests run the CLI as subprocesses against a real control plane.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
