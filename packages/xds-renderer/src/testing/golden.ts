// Tests only: golden files of rendered resources (`UPDATE_GOLDEN=1` rewrites them; review the
// diff), the resources targetRef policies change, and the Envoy schema check of a configuration.
import { readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import { scalarText, type TypedObject } from '../envoy.js';
import type { ProxyConfig } from '../proxy.js';
import { envoySchemaErrors } from './envoy-schema.js';

const testdata = (file: string): URL => new URL(`../testdata/${file}`, import.meta.url);

export function expectGolden(file: string, actual: unknown): void {
  const json = `${JSON.stringify(actual, null, 1)}\n`;
  if (process.env.UPDATE_GOLDEN) writeFileSync(testdata(file), json);
  expect(JSON.parse(json)).toEqual(JSON.parse(readFileSync(testdata(file), 'utf8')));
}

const allResources = (config: ProxyConfig): TypedObject[] => [...config.listeners, ...config.clusters, ...config.endpoints, ...config.routes, ...config.secrets];

/** Every resource of the configuration decodes with Envoy's message definitions. */
export function expectEnvoyAccepts(config: ProxyConfig): void {
  const problems = allResources(config).flatMap((resource) =>
    envoySchemaErrors(resource).map((error) => `${scalarText(resource.name ?? resource.clusterName ?? resource['@type'])}: ${error}`),
  );
  expect(problems).toEqual([]);
}

type Named = TypedObject & { name?: unknown; clusterName?: unknown };

const nameOf = (resource: Named): string => scalarText(resource.name ?? resource.clusterName);

/** What a configuration has that another has not (or has otherwise), by type, and the names it lost. */
export function changedResources(before: ProxyConfig, after: ProxyConfig): Record<string, unknown> {
  const diff: Record<string, unknown> = {};
  for (const type of ['listeners', 'clusters', 'endpoints', 'routes', 'secrets'] as const) {
    const earlier = new Map((before[type] as readonly Named[]).map((resource) => [nameOf(resource), JSON.stringify(resource)]));
    const later = after[type] as readonly Named[];
    const changed = later.filter((resource) => earlier.get(nameOf(resource)) !== JSON.stringify(resource));
    const laterNames = new Set(later.map(nameOf));
    const removed = [...earlier.keys()].filter((name) => !laterNames.has(name));
    if (changed.length > 0) diff[type] = changed;
    if (removed.length > 0) diff[`removed ${type}`] = removed;
  }
  return diff;
}
