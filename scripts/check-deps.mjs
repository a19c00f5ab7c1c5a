// Keeps the package graph one way: apps -> control-plane -> (store-sqlite, store-postgres, http-api, kds,
// xds-server) -> (tokens -> pki -> resource-manager; insights, proxy-config, store, policy-matcher, xds-renderer) -> model.
// Each package may depend only on the ones listed here, and the rule is checked twice: on what its
// package.json declares, and on what its source files import (docs/architecture.md, Packages).
import { readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const ALLOWED = {
  '@mesh/model': [],
  '@mesh/store': ['@mesh/model'],
  '@mesh/store-sqlite': ['@mesh/model', '@mesh/store'],
  '@mesh/store-postgres': ['@mesh/model', '@mesh/store'],
  '@mesh/policy-matcher': ['@mesh/model'],
  '@mesh/xds-renderer': ['@mesh/model', '@mesh/policy-matcher'],
  '@mesh/resource-manager': ['@mesh/model', '@mesh/store'],
  // Keys and certificates: mesh CAs, proxy identities, token signing keys; registers its write rules with the manager.
  '@mesh/pki': ['@mesh/model', '@mesh/store', '@mesh/resource-manager'],
  '@mesh/insights': ['@mesh/model', '@mesh/store'],
  '@mesh/tokens': ['@mesh/model', '@mesh/store', '@mesh/resource-manager', '@mesh/pki'],
  '@mesh/proxy-config': ['@mesh/model', '@mesh/store', '@mesh/policy-matcher', '@mesh/xds-renderer'],
  '@mesh/http-api': ['@mesh/model', '@mesh/store', '@mesh/resource-manager', '@mesh/tokens', '@mesh/insights', '@mesh/proxy-config', '@mesh/policy-matcher', '@mesh/xds-renderer'],
  // Zone sync between the global and its zones.
  '@mesh/kds': ['@mesh/model', '@mesh/store', '@mesh/resource-manager', '@mesh/tokens'],
  // The data plane server: xDS for proxies, fed by the proxy configurations.
  '@mesh/xds-server': ['@mesh/model', '@mesh/store', '@mesh/resource-manager', '@mesh/pki', '@mesh/tokens', '@mesh/insights', '@mesh/proxy-config', '@mesh/policy-matcher', '@mesh/xds-renderer'],
  // It serves the GUI's build (docs/gui.md), found through the @mesh/gui package.
  '@mesh/control-plane': ['@mesh/model', '@mesh/store', '@mesh/tokens', '@mesh/store-sqlite', '@mesh/store-postgres', '@mesh/resource-manager', '@mesh/pki', '@mesh/insights', '@mesh/proxy-config', '@mesh/http-api', '@mesh/kds', '@mesh/xds-server', '@mesh/gui'],
  '@mesh/zone': ['@mesh/control-plane'],
  '@mesh/global': ['@mesh/control-plane'],
  // Topologies for tests: control plane processes, zone ingresses run by mesh-dp, a private PostgreSQL server.
  '@mesh/testing': ['@mesh/control-plane', '@mesh/dp', '@mesh/store-postgres'],
  // The command-line client speaks HTTP only: it reads the kind registry, nothing else of ours.
  '@mesh/meshctl': ['@mesh/model'],
  // The data plane runner speaks HTTP to the control plane and starts Envoy: of ours, it reads the
  // product's version, which every binary reports alike.
  '@mesh/dp': ['@mesh/model'],
  // The web GUI runs in a browser and speaks HTTP to the API: nothing of ours at run time.
  '@mesh/gui': [],
};

// Further packages a package's tests and test helpers may use (devDependencies only).
const ALLOWED_IN_TESTS = {
  // The end-to-end tests seed insights into the stopped binary's database, and start PostgreSQL.
  '@mesh/zone': ['@mesh/store', '@mesh/store-sqlite', '@mesh/store-postgres', '@mesh/testing'],
  // Its end-to-end tests drive the real zone binary and read its admin token from the database.
  '@mesh/meshctl': ['@mesh/zone', '@mesh/store-sqlite'],
  // Tests run on real stores (the API suite on both), on a write path composed as the control plane's.
  '@mesh/http-api': ['@mesh/store-sqlite', '@mesh/store-postgres', '@mesh/pki'],
  '@mesh/insights': ['@mesh/store-sqlite'],
  '@mesh/proxy-config': ['@mesh/store-sqlite'],
  '@mesh/resource-manager': ['@mesh/store-sqlite'],
  '@mesh/pki': ['@mesh/store-sqlite'],
  '@mesh/tokens': ['@mesh/store-sqlite'],
  '@mesh/kds': ['@mesh/store-sqlite', '@mesh/pki'],
  '@mesh/xds-server': ['@mesh/store-sqlite'],
  // Its API client is typed, at build time, from the OpenAPI document @mesh/http-api's build writes.
  '@mesh/gui': ['@mesh/http-api'],
};

// Modules a package's source loads only when they are installed (development dependencies).
const OPTIONAL_IMPORTS = {
  // Readable log lines on a terminal when it is installed; JSON lines without it.
  '@mesh/control-plane': ['pino-pretty'],
};

const internalOf = (dependencies) => Object.keys(dependencies ?? {}).filter((d) => d.startsWith('@mesh/'));

/** A test, or a helper only tests import (a package's `./testing` face). */
const isTestFile = (path) => /\.test\.ts$/.test(path) || /(^|\/)testing(\.ts$|\/)/.test(path.split(sep).join('/'));

/** The package a bare import names (`@scope/name/sub` is `@scope/name`); undefined for Node's own modules. */
function packageOf(specifier) {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0])) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every module a file imports or re-exports, statically or dynamically, as TypeScript reads them. */
const importsOf = (path) => ts.preProcessFile(readFileSync(path, 'utf8'), true, true).importedFiles.map((file) => file.fileName);

export function checkDependencyDirection(root) {
  const problems = [];
  const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const rootDevDependencies = Object.keys(rootManifest.devDependencies ?? {});
  for (const group of ['packages', 'apps']) {
    for (const dir of readdirSync(join(root, group))) {
      const packageDir = join(root, group, dir);
      const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
      const allowed = ALLOWED[manifest.name];
      if (!allowed) {
        problems.push(`${manifest.name} is not in scripts/check-deps.mjs`);
        continue;
      }
      const allowedInTests = [...allowed, ...(ALLOWED_IN_TESTS[manifest.name] ?? [])];
      for (const dependency of internalOf(manifest.dependencies)) {
        if (!allowed.includes(dependency)) problems.push(`${manifest.name} must not depend on ${dependency}`);
      }
      for (const dependency of internalOf(manifest.devDependencies)) {
        if (!allowedInTests.includes(dependency)) problems.push(`${manifest.name} must not depend on ${dependency}, even in tests`);
      }
      const declared = [...Object.keys(manifest.dependencies ?? {}), ...(OPTIONAL_IMPORTS[manifest.name] ?? [])];
      const declaredForTests = [...declared, ...Object.keys(manifest.devDependencies ?? {}), ...rootDevDependencies];
      for (const file of sourceFiles(join(packageDir, 'src'))) {
        const test = isTestFile(relative(packageDir, file));
        const where = relative(root, file);
        for (const specifier of importsOf(file)) {
          if (specifier.startsWith('.')) {
            if (!resolve(file, '..', specifier).startsWith(packageDir + sep)) problems.push(`${where} imports ${specifier}, outside its package: import the package instead`);
            continue;
          }
          const imported = packageOf(specifier);
          if (imported === undefined || imported === manifest.name) continue;
          if (imported.startsWith('@mesh/') && !(test ? allowedInTests : allowed).includes(imported)) {
            problems.push(`${where} must not import ${imported}${test ? ', even in tests' : ''}`);
          } else if (!(test ? declaredForTests : declared).includes(imported)) {
            problems.push(`${where} imports ${imported}, which ${manifest.name} does not declare in its ${test ? 'dependencies or devDependencies' : 'dependencies'}`);
          }
        }
      }
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = checkDependencyDirection(resolve(import.meta.dirname, '..'));
  for (const problem of problems) console.error(`dependency direction: ${problem}`);
  process.exit(problems.length > 0 ? 1 : 0);
}
