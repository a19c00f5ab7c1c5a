import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { SELECTOR_PROFILES, validateSelectors } from '../validation/tags.js';
import { keyPath, Violations } from '../validation/violations.js';
import { boolValue, duration, list, message, str, u32, u32Value } from '../wire.js';
import { selectorList } from './common.js';

const HttpSchema = message({
  requests: u32(),
  interval: duration(),
  onRateLimit: message({
    status: u32Value(),
    headers: list(message({ key: str(), value: str(), append: boolValue() })),
  }).optional(),
});

export const RateLimitSpecSchema = message({
  sources: selectorList(),
  destinations: selectorList(),
  conf: message({ http: HttpSchema.optional() }).optional(),
});
export type RateLimitSpec = z.infer<typeof RateLimitSpecSchema>;
type HttpConf = z.infer<typeof HttpSchema>;

function validateHttp(v: Violations, http: HttpConf): void {
  if (!http.requests) v.add('conf.http.requests', 'requests must be set');
  if (http.interval === undefined) v.add('conf.http.interval', 'interval must be set');
  http.onRateLimit?.headers?.forEach((header, i) => {
    // The reference's path: singular `header`, index as a quoted key.
    const path = keyPath('conf.http.onRateLimit.header', String(i));
    if (!header.key) v.add(path, 'key must be set');
    if (!header.value) v.add(path, 'value must be set');
  });
}

export function validateRateLimit(spec: RateLimitSpec) {
  const v = new Violations();
  validateSelectors(v, 'sources', spec.sources, SELECTOR_PROFILES.any);
  validateSelectors(v, 'destinations', spec.destinations, SELECTOR_PROFILES.any);
  // `conf: {}` is enough: without `http` nothing is limited.
  if (!spec.conf) v.add('conf', 'must have conf');
  if (spec.conf?.http) validateHttp(v, spec.conf.http);
  return v.list;
}

export const rateLimitKind = defineKind({
  name: 'RateLimit',
  cliNames: { singular: 'rate-limit', plural: 'rate-limits' },
  path: 'rate-limits',
  scope: 'mesh',
  displayName: 'Rate Limits',
  singularDisplayName: 'Rate Limit',
  selection: 'sourcesDestinations',
  reach: 'destinationsAndSenders',
  affects: 'selectedProxies',
  schema: RateLimitSpecSchema,
  validate: validateRateLimit,
  example: demo.inMesh('backend-limit', { sources: demo.FROM_WEB, destinations: demo.TO_BACKEND, conf: { http: { requests: 100, interval: '10s' } } }),
});
