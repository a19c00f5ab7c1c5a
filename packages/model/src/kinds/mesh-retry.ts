import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { durationGreaterThanZero } from '../validation/conf-checks.js';
import { isKnownHttpStatus } from '../validation/http-status.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goDuration, goInt32, goInt64, goStringMap, goUint32 } from '../wire.js';
import { HeaderMatchSchema, HeaderNameSchema } from './http-headers.js';
import { defaultConf, MUST_BE_DEFINED, MUST_NOT_BE_EMPTY, NEEDS_AT_LEAST_ONE_ITEM, targetRefEntries, TargetRefSchema, validateEntries, validateTargetRef, type TargetRefKind } from './target-ref.js';

const BackOffSchema = z.object({ baseInterval: goDuration().optional(), maxInterval: goDuration().optional() });
/** Back off as the upstream's rate-limit reset headers say. */
const RateLimitedBackOffSchema = z.object({
  resetHeaders: z.array(z.object({ name: HeaderNameSchema, format: z.enum(['Seconds', 'UnixTimestamp']) })).optional(),
  maxInterval: goDuration().optional(),
});

const retries = {
  numRetries: goUint32().optional(),
  perTryTimeout: goDuration().optional(),
  backOff: BackOffSchema.optional(),
  rateLimitedBackOff: RateLimitedBackOffSchema.optional(),
};

const HttpSchema = z.object({
  ...retries,
  /** Conditions (`5xx`, `GatewayError`, `HttpMethodGet`, ...) or status codes (`"503"`). */
  retryOn: z.array(z.string()).optional(),
  retriableResponseHeaders: z.array(HeaderMatchSchema).optional(),
  retriableRequestHeaders: z.array(HeaderMatchSchema).optional(),
  hostSelection: z.array(z.object({ predicate: z.string(), tags: goStringMap(), updateFrequency: goInt32().optional().transform((v) => (v === 0 ? undefined : v)) })).optional(),
  hostSelectionMaxAttempts: goInt64().optional(),
});

const GrpcSchema = z.object({
  ...retries,
  /** `Canceled`, `DeadlineExceeded`, `Internal`, `ResourceExhausted`, `Unavailable`. */
  retryOn: z.array(z.string()).optional(),
});

export const MeshRetryConfSchema = defaultConf({
  tcp: z.object({ maxConnectAttempt: goUint32().optional() }).optional(),
  http: HttpSchema.optional(),
  grpc: GrpcSchema.optional(),
});
export type MeshRetryConf = z.infer<typeof MeshRetryConfSchema>;

export const MeshRetrySpecSchema = z.object({
  targetRef: TargetRefSchema,
  to: targetRefEntries(MeshRetryConfSchema),
});
export type MeshRetrySpec = z.infer<typeof MeshRetrySpecSchema>;

const HTTP_RETRY_ON = new Set([
  '5xx',
  'GatewayError',
  'Reset',
  'Retriable4xx',
  'ConnectFailure',
  'EnvoyRatelimited',
  'RefusedStream',
  'Http3PostConnectFailure',
  ...['Connect', 'Delete', 'Get', 'Head', 'Options', 'Patch', 'Post', 'Put', 'Trace'].map((method) => `HttpMethod${method}`),
]);
const GRPC_RETRY_ON = new Set(['Canceled', 'DeadlineExceeded', 'Internal', 'ResourceExhausted', 'Unavailable']);

/** A status code as Go's integer parser reads one, when HTTP knows it. */
function isKnownStatus(text: string): boolean {
  if (!/^[+-]?\d+$/.test(text)) return false;
  return isKnownHttpStatus(Number(text));
}

function validateBackOffs(v: Violations, path: string, section: z.infer<typeof GrpcSchema>): void {
  if (section.backOff && section.backOff.baseInterval === undefined && section.backOff.maxInterval === undefined) v.add(fieldPath(path, 'backOff'), MUST_NOT_BE_EMPTY);
  const rateLimited = section.rateLimitedBackOff;
  if (rateLimited) {
    const at = fieldPath(path, 'rateLimitedBackOff');
    if (rateLimited.maxInterval !== undefined) durationGreaterThanZero(v, fieldPath(at, 'maxInterval'), rateLimited.maxInterval);
    // Header names cannot be empty: the schema asks for one character at least.
    if (rateLimited.resetHeaders === undefined) v.add(fieldPath(at, 'resetHeaders'), MUST_BE_DEFINED);
  }
}

function validateHttp(v: Violations, path: string, http: z.infer<typeof HttpSchema>): void {
  const fields = ['numRetries', 'perTryTimeout', 'backOff', 'retryOn', 'retriableRequestHeaders', 'retriableResponseHeaders', 'rateLimitedBackOff', 'hostSelection'] as const;
  if (fields.every((field) => http[field] === undefined)) v.add(path, MUST_NOT_BE_EMPTY);
  validateBackOffs(v, path, http);
  (http.retryOn ?? []).forEach((condition, i) => {
    if (!HTTP_RETRY_ON.has(condition) && !isKnownStatus(condition)) v.add(`${path}.retryOn[${i}]`, `unknown item '${condition}'`);
  });
  let prioritiesSet = false;
  (http.hostSelection ?? []).forEach((predicate, i) => {
    const at = `${path}.hostSelection[${i}]`;
    switch (predicate.predicate) {
      case 'OmitHostsWithTags':
        if (predicate.tags === undefined) v.add(fieldPath(at, 'tags'), MUST_BE_DEFINED);
        break;
      case 'OmitPreviousPriorities':
        if (prioritiesSet) v.add(fieldPath(at, 'predicate'), 'OmitPreviousPriorities must only be specified once');
        if ((predicate.updateFrequency ?? 0) <= 0) v.add(fieldPath(at, 'updateFrequency'), 'must be defined and greater than zero');
        prioritiesSet = true;
        break;
      case 'OmitPreviousHosts':
        break;
      default:
        v.add(fieldPath(at, 'predicate'), `unknown predicate type '${predicate.predicate}'`);
    }
  });
}

function validateGrpc(v: Violations, path: string, grpc: z.infer<typeof GrpcSchema>): void {
  const fields = ['numRetries', 'perTryTimeout', 'backOff', 'retryOn', 'rateLimitedBackOff'] as const;
  if (fields.every((field) => grpc[field] === undefined)) v.add(path, MUST_NOT_BE_EMPTY);
  validateBackOffs(v, path, grpc);
  (grpc.retryOn ?? []).forEach((condition, i) => {
    if (!GRPC_RETRY_ON.has(condition)) v.add(`${path}.retryOn[${i}]`, `unknown item '${condition}'`);
  });
}

/** The conf is reported under `default.conf`, the path the reference uses. */
function validateConf(v: Violations, path: string, conf: MeshRetryConf): void {
  const at = fieldPath(path, 'conf');
  if (!conf.tcp && !conf.http && !conf.grpc) v.add(at, "at least one of the 'tcp', 'http', 'grpc' must be specified");
  if (conf.tcp && conf.tcp.maxConnectAttempt === undefined) v.add(fieldPath(at, 'tcp'), MUST_NOT_BE_EMPTY);
  if (conf.http) validateHttp(v, fieldPath(at, 'http'), conf.http);
  if (conf.grpc) validateGrpc(v, fieldPath(at, 'grpc'), conf.grpc);
}

export function validateMeshRetry(spec: MeshRetrySpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshGateway', 'MeshService', 'MeshServiceSubset']);
  if (!spec.to) v.add('spec.to', NEEDS_AT_LEAST_ONE_ITEM);
  const toKinds: readonly TargetRefKind[] = spec.targetRef.kind === 'MeshGateway' ? ['Mesh'] : ['Mesh', 'MeshService'];
  validateEntries(v, 'spec.to', spec.to, toKinds, validateConf);
  return v.list;
}

export const meshRetryKind = defineKind({
  name: 'MeshRetry',
  cliNames: { singular: 'meshretry', plural: 'meshretries' },
  path: 'meshretries',
  scope: 'mesh',
  displayName: 'Mesh Retries',
  singularDisplayName: 'Mesh Retry',
  targetRefPolicy: { from: false, to: true },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshRetrySpecSchema,
  validate: validateMeshRetry,
  example: demo.inMesh('backend-retry', { spec: { targetRef: demo.MESH, to: [{ targetRef: demo.BACKEND, default: { http: { numRetries: 3, retryOn: ['5xx'] } } }] } }),
});
