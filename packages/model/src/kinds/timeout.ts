import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { requireNonZero, requireNonZeroWhenDefined, validateServiceToService } from '../validation/policy-rules.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { duration, message } from '../wire.js';
import { selectorList } from './common.js';

const ConfSchema = message({
  connectTimeout: duration(),
  tcp: message({ idleTimeout: duration() }).optional(),
  http: message({
    requestTimeout: duration(),
    idleTimeout: duration(),
    // Not validated by the reference.
    streamIdleTimeout: duration(),
    maxStreamDuration: duration(),
  }).optional(),
  grpc: message({ streamIdleTimeout: duration(), maxStreamDuration: duration() }).optional(),
});

export const TimeoutSpecSchema = message({
  sources: selectorList(),
  destinations: selectorList(),
  conf: ConfSchema.optional(),
});
export type TimeoutSpec = z.infer<typeof TimeoutSpecSchema>;
type Conf = z.infer<typeof ConfSchema>;

const EMPTY_SECTION = 'at least one timeout in section has to be defined';

/** A section needs one of the named timeouts; each one given must not be zero. */
function validateSection<K extends string>(v: Violations, path: string, section: Partial<Record<K, string>>, names: readonly K[]): void {
  if (names.every((name) => section[name] === undefined)) {
    v.add(path, EMPTY_SECTION);
    return;
  }
  for (const name of names) requireNonZeroWhenDefined(v, fieldPath(path, name), section[name]);
}

function validateConf(v: Violations, conf: Conf | undefined): void {
  if (!conf) {
    v.add('conf', 'has to be defined');
    return;
  }
  if (conf.tcp) {
    // The one tcp timeout is required, hence the message without "when defined".
    if (conf.tcp.idleTimeout === undefined) v.add('conf.tcp', EMPTY_SECTION);
    else requireNonZero(v, 'conf.tcp.idleTimeout', conf.tcp.idleTimeout);
  }
  if (conf.http) validateSection(v, 'conf.http', conf.http, ['requestTimeout', 'idleTimeout']);
  if (conf.grpc) validateSection(v, 'conf.grpc', conf.grpc, ['streamIdleTimeout', 'maxStreamDuration']);
}

export function validateTimeout(spec: TimeoutSpec) {
  const v = new Violations();
  validateServiceToService(v, spec);
  validateConf(v, spec.conf);
  return v.list;
}

export const timeoutKind = defineKind({
  name: 'Timeout',
  cliNames: { singular: 'timeout', plural: 'timeouts' },
  path: 'timeouts',
  scope: 'mesh',
  displayName: 'Timeouts',
  singularDisplayName: 'Timeout',
  selection: 'sourcesDestinations',
  affects: 'selectedProxies',
  schema: TimeoutSpecSchema,
  validate: validateTimeout,
  example: demo.inMesh('backend-timeout', { sources: demo.FROM_WEB, destinations: demo.TO_BACKEND, conf: { connectTimeout: '5s', http: { requestTimeout: '15s' } } }),
});
