import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { isUrl } from '../validation/address.js';
import { isFilePath } from '../validation/conf-checks.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goList, str } from '../wire.js';
import { defaultConf, FROM_OR_TO_REQUIRED, MUST_BE_DEFINED, MUST_NOT_BE_EMPTY, targetRefEntries, TargetRefSchema, validateEntries, validateTargetRef } from './target-ref.js';

const JsonValueSchema = z.object({ key: str(), value: str() });

/** How a line is written: Envoy's plain format string, or JSON fields whose values are format strings. */
const FormatSchema = z.object({
  type: z.enum(['Plain', 'Json']),
  plain: z.string().optional(),
  json: z.array(JsonValueSchema).optional(),
  omitEmptyValues: z.boolean().optional(),
});

const BackendSchema = z.object({
  type: z.enum(['Tcp', 'File', 'OpenTelemetry']),
  tcp: z.object({ format: FormatSchema.optional(), address: z.string() }).optional(),
  file: z.object({ format: FormatSchema.optional(), path: z.string() }).optional(),
  openTelemetry: z
    .object({
      attributes: goList(JsonValueSchema),
      /** Any JSON value, the body of each log record. */
      body: z.unknown().optional(),
      endpoint: z.string().min(1),
    })
    .optional(),
});

export const MeshAccessLogConfSchema = defaultConf({ backends: z.array(BackendSchema).optional() });
export type MeshAccessLogConf = z.infer<typeof MeshAccessLogConfSchema>;

export const MeshAccessLogSpecSchema = z.object({
  targetRef: TargetRefSchema,
  to: targetRefEntries(MeshAccessLogConfSchema),
  from: targetRefEntries(MeshAccessLogConfSchema),
});
export type MeshAccessLogSpec = z.infer<typeof MeshAccessLogSpecSchema>;

type Format = z.infer<typeof FormatSchema>;
type Backend = z.infer<typeof BackendSchema>;

/** Whether a JSON field would give a valid JSON object once placed in `{"<key>": "<value>"}`. */
function isValidJsonField(key: string, value: string): boolean {
  try {
    JSON.parse(`{"${key}": "${value}"}`);
    return true;
  } catch {
    return false;
  }
}

function validateFormat(v: Violations, path: string, format: Format): void {
  if (format.type === 'Plain') {
    if (format.plain === undefined) v.add(fieldPath(path, 'plain'), MUST_BE_DEFINED);
    else if (format.plain === '') v.add(fieldPath(path, 'plain'), MUST_NOT_BE_EMPTY);
    return;
  }
  const json = format.json;
  if (json === undefined) {
    v.add(fieldPath(path, 'json'), MUST_BE_DEFINED);
    return;
  }
  if (json.length === 0) v.add(fieldPath(path, 'json'), MUST_NOT_BE_EMPTY);
  json.forEach((field, i) => {
    const at = `${fieldPath(path, 'json')}[${i}]`;
    const key = field.key ?? '';
    const value = field.value ?? '';
    if (key === '') v.add(fieldPath(at, 'key'), 'key cannot be empty');
    if (value === '') v.add(fieldPath(at, 'value'), 'value cannot be empty');
    if (!isValidJsonField(key, value)) v.add(at, 'is not a valid JSON object');
  });
}

function validateBackend(v: Violations, path: string, backend: Backend): void {
  switch (backend.type) {
    case 'File': {
      const file = backend.file;
      if (!file) {
        v.add(fieldPath(path, 'file'), MUST_BE_DEFINED);
        return;
      }
      if (file.format) validateFormat(v, fieldPath(path, 'file.format'), file.format);
      if (!isFilePath(file.path)) v.add(fieldPath(path, 'file.path'), 'file backend requires a valid path');
      return;
    }
    case 'Tcp': {
      const tcp = backend.tcp;
      if (!tcp) {
        v.add(fieldPath(path, 'tcp'), MUST_BE_DEFINED);
        return;
      }
      if (tcp.format) validateFormat(v, fieldPath(path, 'tcp.format'), tcp.format);
      if (!isUrl(tcp.address)) v.add(fieldPath(path, 'tcp.address'), 'tcp backend requires valid address');
      return;
    }
    case 'OpenTelemetry':
      if (!backend.openTelemetry) v.add(fieldPath(path, 'openTelemetry'), MUST_BE_DEFINED);
  }
}

function validateConf(v: Violations, path: string, conf: MeshAccessLogConf): void {
  if (conf.backends === undefined) {
    v.add(fieldPath(path, 'backends'), MUST_BE_DEFINED);
    return;
  }
  conf.backends.forEach((backend, i) => validateBackend(v, `${fieldPath(path, 'backends')}[${i}]`, backend));
}

export function validateMeshAccessLog(spec: MeshAccessLogSpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshGateway', 'MeshService', 'MeshServiceSubset']);
  if (!spec.to && !spec.from) v.add('spec', FROM_OR_TO_REQUIRED);
  validateEntries(v, 'spec.to', spec.to, ['Mesh', 'MeshService'], validateConf);
  validateEntries(v, 'spec.from', spec.from, ['Mesh'], validateConf);
  return v.list;
}

export const meshAccessLogKind = defineKind({
  name: 'MeshAccessLog',
  cliNames: { singular: 'meshaccesslog', plural: 'meshaccesslogs' },
  path: 'meshaccesslogs',
  scope: 'mesh',
  displayName: 'Mesh Access Logs',
  singularDisplayName: 'Mesh Access Log',
  targetRefPolicy: { from: true, to: true },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshAccessLogSpecSchema,
  validate: validateMeshAccessLog,
  example: demo.inMesh('web-access-log', { spec: { targetRef: demo.WEB, from: [{ targetRef: demo.MESH, default: { backends: [{ type: 'File', file: { path: '/tmp/access.log' } }] } }] } }),
});
