#!/usr/bin/env node
// Writes dist/openapi.json: the OpenAPI document `/openapi.json` serves, built from the route table
// at build time (no server runs), so clients can be typed from it (apps/gui generates its API types
// from this file). Runs after tsup, on the package's own build; the routes are the same in every mode.
import { readFileSync, writeFileSync } from 'node:fs';
import { InsightAggregator } from '@mesh/insights';
import { ProxyConfigService } from '@mesh/proxy-config';
import { ResourceManager } from '@mesh/resource-manager';
import { SqliteResourceStore } from '@mesh/store-sqlite';
import { ADMIN_ONLY_RULES, apiDocument, createRouteTable } from '../dist/index.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const store = new SqliteResourceStore({ path: ':memory:' });
const manager = new ResourceManager({ store, mode: 'standalone' });
const ctx = {
  manager,
  insights: new InsightAggregator({ store: manager.reader }),
  proxyConfigs: new ProxyConfigService({ store: manager.reader }),
  mode: 'standalone',
  zoneName: undefined,
  access: { localhostIsAdmin: true, rules: ADMIN_ONLY_RULES },
  corsAllowedDomains: [],
  logger: { error() {} },
  info: { hostname: '', product: 'Mesh', version, instanceId: '', clusterId: '' },
  effectiveConfig: {},
};
writeFileSync(new URL('../dist/openapi.json', import.meta.url), `${JSON.stringify(apiDocument(createRouteTable(ctx), ctx), null, 2)}\n`);
await store.close();
