import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { defineConfig, type TestProjectConfiguration } from 'vitest/config';

/** PostgreSQL's server binaries, which the PostgreSQL runs of the suites need (.ci/run installs them). */
const postgresInstalled = existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').length > 0;

/**
 * Every test passes on a machine whose cores are busy with other work: it fails on what it
 * asserts, never on the clock (docs/architecture.md, Tests). Vitest's own 5 s would fail a test of
 * a second or two that a loaded machine slows tenfold.
 */
const timeouts = { testTimeout: 60_000, hookTimeout: 60_000 };

/** A workspace folder: its own vitest config when it has one, else its tests with the suite's timeouts. */
function projectOf(folder: string): TestProjectConfiguration {
  if (existsSync(`${folder}/vitest.config.ts`)) return folder;
  const { name } = JSON.parse(readFileSync(`${folder}/package.json`, 'utf8')) as { name: string };
  return { test: { name, root: `./${folder}`, ...timeouts } };
}

const folders = ['packages', 'apps'].flatMap((parent) =>
  readdirSync(parent)
    .map((child) => `${parent}/${child}`)
    .filter((folder) => existsSync(`${folder}/package.json`)),
);

export default defineConfig({
  test: {
    // Two files at a time even on two cores: the end-to-end files spend most of their time waiting
    // on processes they started (control planes, Envoy, Chromium). Their ports come from a range
    // per worker (packages/testing/src/process.ts).
    maxWorkers: 2,
    projects: [
      ...folders.map(projectOf),
      // The packages as a program outside the repository uses them, and their API reports (docs/architecture.md, Public packages).
      { test: { name: 'public packages', root: './tests', include: ['*.test.ts'], ...timeouts } },
      // The REST API suite once more, every test store a database on a private PostgreSQL server.
      ...(postgresInstalled || process.env.CI
        ? [
            {
              test: {
                name: '@mesh/http-api (postgres)',
                root: './packages/http-api',
                include: ['src/**/*.test.ts'],
                globalSetup: ['../store-postgres/dist/testing/global-setup.js'],
                ...timeouts,
              },
            },
          ]
        : []),
    ],
  },
});
