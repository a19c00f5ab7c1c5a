import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import {
  isEmptyMessage,
  requireNonZero,
  requireNonZeroWhenDefined,
  validateServiceToService,
} from '../validation/policy-rules.js';
import { fieldPath, indexPath, Violations } from '../validation/violations.js';
import { duration, list, message, u32, u32Value } from '../wire.js';
import { selectorList } from './common.js';

// Enum lists keep every element by name, the zero value (first name) included.
const HTTP_METHODS = ['NONE', 'CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'] as const;
const HTTP_RETRY_ON = [
  'all_5xx',
  'gateway_error',
  'reset',
  'connect_failure',
  'envoy_ratelimited',
  'retriable_4xx',
  'refused_stream',
  'retriable_status_codes',
  'retriable_headers',
  'http3_post_connect_failure',
] as const;
const GRPC_RETRY_ON = ['cancelled', 'deadline_exceeded', 'internal', 'resource_exhausted', 'unavailable'] as const;

const BackOffSchema = message({ baseInterval: duration(), maxInterval: duration() });

const HttpSchema = message({
  numRetries: u32Value(),
  perTryTimeout: duration(),
  backOff: BackOffSchema.optional(),
  retriableStatusCodes: list(u32Value().unwrap()),
  retriableMethods: list(z.enum(HTTP_METHODS)),
  retryOn: list(z.enum(HTTP_RETRY_ON)),
});

const GrpcSchema = message({
  retryOn: list(z.enum(GRPC_RETRY_ON)),
  numRetries: u32Value(),
  perTryTimeout: duration(),
  backOff: BackOffSchema.optional(),
});

const ConfSchema = message({
  http: HttpSchema.optional(),
  tcp: message({ maxConnectAttempts: u32() }).optional(),
  grpc: GrpcSchema.optional(),
});

export const RetrySpecSchema = message({
  sources: selectorList(),
  destinations: selectorList(),
  conf: ConfSchema.optional(),
});
export type RetrySpec = z.infer<typeof RetrySpecSchema>;
type Conf = z.infer<typeof ConfSchema>;
type HttpConf = z.infer<typeof HttpSchema>;
type GrpcConf = z.infer<typeof GrpcSchema>;

/** The fields HTTP and gRPC retries share: how many tries, how long each, how long between them. */
function validateAttempts(v: Violations, path: string, conf: HttpConf | GrpcConf): void {
  requireNonZeroWhenDefined(v, fieldPath(path, 'numRetries'), conf.numRetries);
  requireNonZeroWhenDefined(v, fieldPath(path, 'perTryTimeout'), conf.perTryTimeout);
  const { backOff } = conf;
  if (!backOff) return;
  const backOffPath = fieldPath(path, 'backOff');
  const basePath = fieldPath(backOffPath, 'baseInterval');
  if (backOff.baseInterval === undefined) v.add(basePath, 'has to be defined');
  // The maximum is only looked at once the base is fine.
  else if (requireNonZero(v, basePath, backOff.baseInterval)) {
    requireNonZeroWhenDefined(v, fieldPath(backOffPath, 'maxInterval'), backOff.maxInterval);
  }
}

function validateHttp(v: Violations, path: string, http: HttpConf): void {
  if (isEmptyMessage(http)) v.add(path, 'field cannot be empty');
  validateAttempts(v, path, http);
  http.retriableMethods?.forEach((method, i) => {
    if (method === 'NONE') v.add(indexPath(fieldPath(path, 'retriableMethods'), i), 'field cannot be empty');
  });
  http.retryOn?.forEach((condition, i) => {
    if (condition === 'retriable_status_codes' && !http.retriableStatusCodes) {
      v.add(indexPath(fieldPath(path, 'retryOn'), i), 'retriableStatusCodes cannot be empty when this option is specified');
    }
  });
}

/** One message per value listed more than once, sorted by message as the reference sorts them. */
function repeatedValueMessages(values: readonly string[]): string[] {
  const indexesByValue = new Map<string, number[]>();
  values.forEach((value, i) => indexesByValue.set(value, [...(indexesByValue.get(value) ?? []), i]));
  return [...indexesByValue]
    .filter(([, indexes]) => indexes.length > 1)
    .map(([value, indexes]) => `repeated value ${JSON.stringify(value)} at indexes [${indexes.join(', ')}]`)
    .sort();
}

function validateGrpc(v: Violations, path: string, grpc: GrpcConf): void {
  if (isEmptyMessage(grpc)) v.add(path, 'field cannot be empty');
  for (const text of repeatedValueMessages(grpc.retryOn ?? [])) v.add(fieldPath(path, 'retryOn'), text);
  validateAttempts(v, path, grpc);
}

function validateConf(v: Violations, conf: Conf | undefined): void {
  if (!conf) {
    v.add('conf', 'has to be defined');
    return;
  }
  if (!conf.http && !conf.grpc && !conf.tcp) {
    v.add('conf', 'missing protocol [grpc|http|tcp] configuration');
    return;
  }
  if (conf.http) validateHttp(v, 'conf.http', conf.http);
  if (conf.grpc) validateGrpc(v, 'conf.grpc', conf.grpc);
  if (conf.tcp) requireNonZero(v, 'conf.tcp.maxConnectAttempts', conf.tcp.maxConnectAttempts ?? 0);
}

export function validateRetry(spec: RetrySpec) {
  const v = new Violations();
  validateServiceToService(v, spec);
  validateConf(v, spec.conf);
  return v.list;
}

export const retryKind = defineKind({
  name: 'Retry',
  cliNames: { singular: 'retry', plural: 'retries' },
  path: 'retries',
  scope: 'mesh',
  displayName: 'Retries',
  singularDisplayName: 'Retry',
  selection: 'sourcesDestinations',
  affects: 'selectedProxies',
  schema: RetrySpecSchema,
  validate: validateRetry,
  example: demo.inMesh('backend-retry', { sources: demo.FROM_WEB, destinations: demo.TO_BACKEND, conf: { http: { numRetries: 3, perTryTimeout: '2s' } } }),
});
