import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: '@mesh/zone',
    // End-to-end tests start real processes.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
