// Keeps the package graph one way: apps -> control-plane -> http-api -> (resource-manager, store,
// policy-matcher, xds-renderer) -> model. Each package may depend only on the ones listed here.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ALLOWED = {
  '@mesh/model': [],
  '@mesh/store': ['@mesh/model'],
  '@mesh/policy-matcher': ['@mesh/model'],
  '@mesh/xds-renderer': ['@mesh/model', '@mesh/policy-matcher'],
  '@mesh/resource-manager': ['@mesh/model', '@mesh/store'],
  '@mesh/http-api': ['@mesh/model', '@mesh/store', '@mesh/resource-manager', '@mesh/policy-matcher', '@mesh/xds-renderer'],
  '@mesh/control-plane': ['@mesh/model', '@mesh/store', '@mesh/resource-manager', '@mesh/http-api'],
  '@mesh/zone': ['@mesh/control-plane'],
  '@mesh/global': ['@mesh/control-plane'],
};

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
      const internal = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((d) => d.startsWith('@mesh/'));
      for (const dependency of internal) {
        if (!allowed.includes(dependency)) problems.push(`${manifest.name} must not depend on ${dependency}`);
      }
    }
  }
  return problems;
}
