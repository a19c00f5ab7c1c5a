import { existsSync, readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/** PostgreSQL's server binaries, which the PostgreSQL runs of the suites need (.ci/run installs them). */
const postgresInstalled = existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').length > 0;

export default defineConfig({
  test: {
    projects: [
      'packages/*',
      'apps/*',
      // The REST API suite once more, every test store a database on a private PostgreSQL server.
      ...(postgresInstalled || process.env.CI
        ? [
            {
              test: {
                name: '@mesh/http-api (postgres)',
                root: './packages/http-api',
                include: ['src/**/*.test.ts'],
                globalSetup: ['../store-postgres/dist/testing/global-setup.js'],
              },
            },
          ]
        : []),
    ],
  },
});
