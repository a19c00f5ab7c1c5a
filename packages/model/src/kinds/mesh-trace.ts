import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { isUrl, parseRequestUriParts } from '../validation/address.js';
import { decimalOf } from '../validation/conf-checks.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { intOrString } from '../wire.js';
import { defaultConf, MUST_BE_DEFINED, MUST_NOT_BE_DEFINED, MUST_NOT_BE_EMPTY, mustHaveOnlyOne, TargetRefSchema, validateTargetRef } from './target-ref.js';

const BackendSchema = z.object({
  type: z.enum(['Zipkin', 'Datadog', 'OpenTelemetry']),
  zipkin: z
    .object({
      url: z.string(),
      traceId128bit: z.boolean().optional(),
      apiVersion: z.enum(['httpJson', 'httpProto']).optional(),
      sharedSpanContext: z.boolean().optional(),
    })
    .optional(),
  datadog: z.object({ url: z.string(), splitService: z.boolean().optional() }).optional(),
  openTelemetry: z.object({ endpoint: z.string().min(1) }).optional(),
});
type Backend = z.infer<typeof BackendSchema>;

export const MeshTraceConfSchema = defaultConf({
  backends: z.array(BackendSchema).optional(),
  /** Percentages of requests traced: all of them, those the client asked for, those picked at random. */
  sampling: z.object({ overall: intOrString().optional(), client: intOrString().optional(), random: intOrString().optional() }).optional(),
  /** Span tags: a literal value, or a request header's value. */
  tags: z
    .array(z.object({ name: z.string(), literal: z.string().optional(), header: z.object({ name: z.string(), default: z.string().optional() }).optional() }))
    .optional(),
});
export type MeshTraceConf = z.infer<typeof MeshTraceConfSchema>;

export const MeshTraceSpecSchema = z.object({ targetRef: TargetRefSchema, default: MeshTraceConfSchema });
export type MeshTraceSpec = z.infer<typeof MeshTraceSpecSchema>;

/** The agent's address: `http://host:port` and nothing more. */
function validateDatadogUrl(v: Violations, path: string, url: string): void {
  const uri = parseRequestUriParts(url);
  if (!uri) {
    v.add(path, 'must be a valid url');
    return;
  }
  if (uri.scheme !== 'http') v.add(path, 'scheme must be http');
  if (uri.port === '') v.add(path, `port ${MUST_BE_DEFINED}`);
  else if (Number(uri.port) === 0 || Number(uri.port) > 65535) v.add(path, 'port must be a valid (1-65535)');
  const present = { opaque: uri.opaque !== '', user: uri.user, path: uri.path !== '', query: uri.query !== '' };
  for (const [part, set] of Object.entries(present)) if (set) v.add(path, `${part} ${MUST_NOT_BE_DEFINED}`);
}

function validateBackend(v: Violations, path: string, backend: Backend): void {
  switch (backend.type) {
    case 'Datadog':
      if (!backend.datadog) v.add(fieldPath(path, 'datadog'), MUST_BE_DEFINED);
      else validateDatadogUrl(v, fieldPath(path, 'datadog.url'), backend.datadog.url);
      break;
    case 'Zipkin':
      if (!backend.zipkin) v.add(fieldPath(path, 'zipkin'), MUST_BE_DEFINED);
      else if (backend.zipkin.url === '') v.add(fieldPath(path, 'zipkin.url'), MUST_NOT_BE_EMPTY);
      else if (!isUrl(backend.zipkin.url)) v.add(fieldPath(path, 'zipkin.url'), 'must be a valid url');
      break;
    case 'OpenTelemetry':
      if (!backend.openTelemetry) v.add(fieldPath(path, 'openTelemetry'), MUST_BE_DEFINED);
  }
}

function validateSampling(v: Violations, path: string, value: number | string | undefined): void {
  if (value === undefined) return;
  const number = decimalOf(value);
  if (number === undefined) v.add(path, 'string is not a number');
  const checked = number ?? 0;
  if (checked < 0 || checked > 100) v.add(path, 'must be between 0 and 100');
}

function validateConf(v: Violations, path: string, conf: MeshTraceConf): void {
  const backendsPath = fieldPath(path, 'backends');
  const backends = conf.backends;
  if (backends === undefined) v.add(backendsPath, MUST_BE_DEFINED);
  else if (backends.length === 1) validateBackend(v, `${backendsPath}[0]`, backends[0]!);
  else if (backends.length > 1) v.add(backendsPath, 'must have zero or one backend defined');
  (conf.tags ?? []).forEach((tag, i) => {
    const at = `${fieldPath(path, 'tags')}[${i}]`;
    if (tag.name === '') v.add(fieldPath(at, 'name'), MUST_NOT_BE_EMPTY);
    if ((tag.header !== undefined) === (tag.literal !== undefined)) v.add(at, mustHaveOnlyOne('tag', 'header', 'literal'));
  });
  const sampling = conf.sampling;
  if (sampling) {
    validateSampling(v, fieldPath(path, 'sampling.client'), sampling.client);
    validateSampling(v, fieldPath(path, 'sampling.random'), sampling.random);
    validateSampling(v, fieldPath(path, 'sampling.overall'), sampling.overall);
  }
}

export function validateMeshTrace(spec: MeshTraceSpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshService', 'MeshServiceSubset']);
  validateConf(v, 'spec.default', spec.default);
  return v.list;
}

export const meshTraceKind = defineKind({
  name: 'MeshTrace',
  cliNames: { singular: 'meshtrace', plural: 'meshtraces' },
  path: 'meshtraces',
  scope: 'mesh',
  displayName: 'Mesh Traces',
  singularDisplayName: 'Mesh Trace',
  targetRefPolicy: { from: false, to: false },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshTraceSpecSchema,
  validate: validateMeshTrace,
  example: demo.inMesh('web-traces', { spec: { targetRef: demo.WEB, default: { backends: [{ type: 'Zipkin', zipkin: { url: 'http://zipkin.local:9411/api/v2/spans' } }] } } }),
});
