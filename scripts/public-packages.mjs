// The packages meant for reuse by programs outside this repository (docs/architecture.md, Public
// packages): their API reports are checked in (scripts/api-report.mjs), TypeDoc documents them
// (`npm run docs:api`) and the examples their READMEs open with run in the suite.
export const PUBLIC_PACKAGES = [
  'packages/model',
  'packages/store',
  'packages/store-sqlite',
  'packages/store-postgres',
  'packages/resource-manager',
  'packages/pki',
  'packages/policy-matcher',
  'packages/xds-renderer',
  'packages/tokens',
  'packages/control-plane',
  'packages/testing',
];
