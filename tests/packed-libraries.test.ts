// The packages as a program outside this repository meets them: packed by pnpm into tarballs,
// installed by npm into a temporary project with no link to the workspace, compiled with strict
// TypeScript and run by plain Node; the examples the public packages' READMEs open with run there
// too (docs/architecture.md, Public packages).
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- a script of the repository, in JavaScript without declarations
import { PUBLIC_PACKAGES } from '../scripts/public-packages.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { packageManager: string; devDependencies: Record<string, string> };

/** Every published package: the libraries, and the GUI build the control plane serves. */
const publishedFolders = [...readdirSync(join(root, 'packages')).map((name) => `packages/${name}`), 'apps/gui', 'apps/dp'].filter((folder) => existsSync(join(root, folder, 'package.json')));

/** What the program and the examples import. */
const USED = ['@mesh/model', '@mesh/store', '@mesh/store-sqlite', '@mesh/store-postgres', '@mesh/resource-manager', '@mesh/pki', '@mesh/policy-matcher', '@mesh/xds-renderer', '@mesh/tokens', '@mesh/control-plane'];

/** The topology package's example is a vitest file starting processes: the suite runs it as its own test (packages/testing/src/readme-example.test.ts). */
const WITHOUT_RUN_EXAMPLE = new Set(['packages/testing']);

/** The example a README opens with: the ```ts block right under its first heading, or undefined. */
function exampleOf(folder: string): string | undefined {
  const readme = readFileSync(join(root, folder, 'README.md'), 'utf8');
  return /^# [^\n]*\n\s*```ts\n([\s\S]*?)\n```\n/.exec(readme)?.[1];
}

const examples = (PUBLIC_PACKAGES as string[]).filter((folder) => !WITHOUT_RUN_EXAMPLE.has(folder)).map((folder) => ({ folder, name: folder.split('/').pop()!, code: exampleOf(folder) }));

/** The PostgreSQL store's example starts a private server from the installed binaries, as its tests do. */
const postgresInstalled = existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').length > 0;

interface Manifest {
  name: string;
  version?: string;
  private?: boolean;
  license?: string;
  repository?: { directory?: string };
  engines?: { node?: string };
  exports?: Record<string, string | { types?: string; import?: string }>;
  files?: string[];
  dependencies?: Record<string, string>;
}

let work: string;
const tarballs = new Map<string, string>();
const started = Date.now();

/** Logs how long each step took, so a slow step shows in CI's output. */
function step<T>(what: string, run: () => T): T {
  const at = Date.now();
  const result = run();
  console.log(`packed libraries: ${what} took ${((Date.now() - at) / 1000).toFixed(1)} s`);
  return result;
}

/** Runs a command to its end; a failure carries what the command printed (tsc reports on stdout). */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  try {
    return execFileSync(command, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

const manifestIn = (tarball: string): Manifest => JSON.parse(run('tar', ['-xOzf', tarball, 'package/package.json'], work)) as Manifest;
const filesIn = (tarball: string): string[] => run('tar', ['-tzf', tarball], work).split('\n').filter(Boolean).map((path) => path.replace(/^package\//, ''));

/**
 * better-sqlite3 compiles its native module at install, minutes on a busy machine: the project
 * takes the workspace's build of the same version, and compiles only when the versions differ.
 */
function provideSqliteBinding(project: string): void {
  const workspaceModule = dirname(createRequire(join(root, 'packages/store-sqlite/package.json')).resolve('better-sqlite3/package.json'));
  const projectModule = join(project, 'node_modules/better-sqlite3');
  const versionOf = (folder: string) => (JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { version: string }).version;
  const binding = join(workspaceModule, 'build/Release/better_sqlite3.node');
  if (versionOf(workspaceModule) === versionOf(projectModule) && existsSync(binding)) {
    mkdirSync(join(projectModule, 'build/Release'), { recursive: true });
    copyFileSync(binding, join(projectModule, 'build/Release/better_sqlite3.node'));
    return;
  }
  run('npm', ['rebuild', 'better-sqlite3'], project, { npm_config_nodedir: process.env.npm_config_nodedir ?? dirname(dirname(process.execPath)) });
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'mesh-packed-'));
  const packs = join(work, 'tarballs');
  const filters = publishedFolders.flatMap((folder) => ['--filter', `./${folder}`]);
  step('pnpm pack', () => run('npx', ['-y', rootManifest.packageManager, '-r', ...filters, 'pack', '--pack-destination', packs], root));
  for (const file of readdirSync(packs)) tarballs.set(manifestIn(join(packs, file)).name, join(packs, file));

  const project = join(work, 'project');
  mkdirSync(project);
  const fileSpec = (name: string) => `file:${tarballs.get(name)}`;
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'mesh-library-user',
      private: true,
      type: 'module',
      dependencies: Object.fromEntries(USED.map((name) => [name, fileSpec(name)])),
      devDependencies: { '@types/node': rootManifest.devDependencies['@types/node'] },
      // Our packages depend on each other by version: npm takes those from the tarballs too, not the registry.
      overrides: Object.fromEntries([...tarballs.keys()].map((name) => [name, fileSpec(name)])),
    }),
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022'], types: ['node'], skipLibCheck: true, outDir: 'dist' },
      include: ['src'],
    }),
  );
  cpSync(join(root, 'tests/packed-libraries/main.ts'), join(project, 'src/main.ts'));
  mkdirSync(join(project, 'src/examples'));
  for (const { name, code } of examples) if (code) writeFileSync(join(project, 'src/examples', `${name}.ts`), code);
  step('npm install', () => run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--ignore-scripts', '--prefer-offline'], project));
  step('better-sqlite3 binding', () => provideSqliteBinding(project));
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');
  step('tsc', () => run(process.execPath, [tsc, '-p', project], project));
}, 900_000);

afterAll(() => {
  console.log(`packed libraries: ${((Date.now() - started) / 1000).toFixed(1)} s in all`);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packages packed as tarballs', () => {
  it('are publishable: no private flag, fields set, workspace and catalog versions replaced by ranges', () => {
    expect([...tarballs.keys()].sort()).toEqual(publishedFolders.map((folder) => (JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8')) as Manifest).name).sort());
    for (const folder of publishedFolders) {
      const { name } = JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8')) as Manifest;
      const tarball = tarballs.get(name)!;
      const manifest = manifestIn(tarball);
      const files = filesIn(tarball);
      expect(manifest.private, name).toBeUndefined();
      expect(manifest.version, name).toMatch(/^\d+\.\d+\.\d+/);
      expect(manifest.license, name).toBeTruthy();
      expect(manifest.repository?.directory, name).toBe(folder);
      expect(manifest.engines?.node, name).toBe('>=20');
      for (const [dependency, range] of Object.entries(manifest.dependencies ?? {})) expect(range, `${name} -> ${dependency}`).not.toMatch(/^(workspace|catalog):/);
      for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
        const entry = typeof target === 'string' ? { import: target } : target;
        expect(files, `${name} ${subpath}`).toContain(entry.import?.replace(/^\.\//, ''));
        if (entry.types) expect(files, `${name} ${subpath} types`).toContain(entry.types.replace(/^\.\//, ''));
      }
    }
  });

  it('install from the tarballs alone: no package is a link into the workspace', () => {
    const project = join(work, 'project');
    for (const name of tarballs.keys()) {
      const installed = join(project, 'node_modules', name);
      if (existsSync(installed)) expect(lstatSync(installed).isSymbolicLink(), name).toBe(false);
    }
    for (const name of USED) expect(existsSync(join(project, 'node_modules', name, 'package.json')), name).toBe(true);
  });

  it('compile with strict TypeScript and run in plain Node: validate, store, match, render, issue and verify a token', () => {
    const project = join(work, 'project');
    const output = step('node', () => run(process.execPath, ['dist/main.js'], project));
    expect(output.split('\n').filter(Boolean)).toEqual([
      'ok: a valid Dataplane has no violations',
      'ok: an inbound without tags is refused by field path (networking.inbound[0].tags["mesh.io/service"]: tag has to exist)',
      'ok: a valid MeshTimeout has no violations',
      'ok: an empty http section is refused by field path (spec.to[0].default.http: at least one timeout in this section should be configured)',
      'ok: the dataplane reads back from the SQLite file',
      'ok: the MeshTimeout selects the web proxy',
      'ok: the rendered Envoy configuration routes to backend with the 5s request timeout',
      'ok: a dataplane token issued from the store verifies',
      'ok: the token does not verify for another proxy',
    ]);
  });

  it.each(examples.map(({ folder }) => folder))('%s: the README opens with an example', (folder) => {
    expect(exampleOf(folder), `${folder}/README.md starts with a \`\`\`ts block under its title`).toBeTruthy();
  });

  it.each(examples.map(({ name }) => name))('%s: the README example compiles and runs', (name) => {
    if (name === 'store-postgres' && !postgresInstalled) return;
    step(`the ${name} example`, () => run(process.execPath, [`dist/examples/${name}.js`], join(work, 'project')));
  });
});
