// Keeps the package graph one way: apps -> control-plane -> (store-sqlite, store-postgres, http-api, kds,
// xds-server) -> (tokens -> pki -> resource-manager; insights, proxy-config, store, policy-matcher, xds-renderer) -> model. Each package may depend only on the ones listed here.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

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
  '@mesh/control-plane': ['@mesh/model', '@mesh/store', '@mesh/tokens', '@mesh/store-sqlite', '@mesh/store-postgres', '@mesh/resource-manager', '@mesh/pki', '@mesh/insights', '@mesh/proxy-config', '@mesh/http-api', '@mesh/kds', '@mesh/xds-server'],
  '@mesh/zone': ['@mesh/control-plane'],
  '@mesh/global': ['@mesh/control-plane'],
  // The command-line client speaks HTTP only: it reads the kind registry, nothing else of ours.
  '@mesh/meshctl': ['@mesh/model'],
  // The data plane runner speaks HTTP to the control plane and starts Envoy: nothing of ours.
  '@mesh/dp': [],
};

// Further packages a package's tests may use (devDependencies only).
const ALLOWED_IN_TESTS = {
  // The end-to-end tests seed insights into the stopped binary's database, and start PostgreSQL.
  '@mesh/zone': ['@mesh/store', '@mesh/store-sqlite', '@mesh/store-postgres'],
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
  // Its end-to-end tests start the zone binary (and its helpers) beside the proxies.
  '@mesh/dp': ['@mesh/zone'],
};

const internalOf = (dependencies) => Object.keys(dependencies ?? {}).filter((d) => d.startsWith('@mesh/'));

export function checkDependencyDirection(root) {
  const problems = [];
  for (const group of ['packages', 'apps']) {
    for (const dir of readdirSync(join(root, group))) {
      const manifest = JSON.parse(readFileSync(join(root, group, dir, 'package.json'), 'utf8'));
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
    }
  }
  return problems;
}
