import type { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { isKnownHttpStatus } from '../validation/http-status.js';
import { isEmptyMessage, validatePercentRange } from '../validation/policy-rules.js';
import { requireProtocol, SELECTOR_PROFILES, validateSelectors } from '../validation/tags.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { doubleValue, duration, message, strValue, u32Value } from '../wire.js';
import { selectorList } from './common.js';

const ConfSchema = message({
  delay: message({ percentage: doubleValue(), value: duration() }).optional(),
  abort: message({ percentage: doubleValue(), httpStatus: u32Value() }).optional(),
  responseBandwidth: message({ percentage: doubleValue(), limit: strValue() }).optional(),
});

export const FaultInjectionSpecSchema = message({
  sources: selectorList(),
  destinations: selectorList(),
  conf: ConfSchema.optional(),
});
export type FaultInjectionSpec = z.infer<typeof FaultInjectionSpecSchema>;
type Conf = z.infer<typeof ConfSchema>;

/** Faults are injected by the HTTP filter of the destination's inbound: only HTTP-like protocols. */
const DESTINATION_RULES = { ...SELECTOR_PROFILES.any, extraMapChecks: [requireProtocol('http', 'http2', 'grpc')] };

// Unanchored, as in the reference: the unit only has to appear somewhere in the text.
const BANDWIDTH_LIMIT = /\d*\s?[gmk]bps/;

function validatePercentage(v: Violations, faultPath: string, percentage: number | undefined): void {
  const path = fieldPath(faultPath, 'percentage');
  if (percentage === undefined) v.add(path, 'cannot be empty');
  else validatePercentRange(v, path, percentage);
}

/** An empty fault (`{}`) counts as absent. */
const configured = <T extends object>(fault: T | undefined): fault is T => fault !== undefined && !isEmptyMessage(fault);

function validateConf(v: Violations, conf: Conf | undefined): void {
  const { delay, abort, responseBandwidth } = conf ?? {};
  if (!configured(delay) && !configured(abort) && !configured(responseBandwidth)) {
    v.add('conf', 'must have at least one of the faults configured');
  }
  if (configured(delay)) {
    validatePercentage(v, 'conf.delay', delay.percentage);
    if (delay.value === undefined) v.add('conf.delay.value', 'cannot be empty');
  }
  if (configured(abort)) {
    validatePercentage(v, 'conf.abort', abort.percentage);
    if (abort.httpStatus === undefined) v.add('conf.abort.httpStatus', 'cannot be empty');
    else if (!isKnownHttpStatus(abort.httpStatus)) v.add('conf.abort.httpStatus', 'http status code is incorrect');
  }
  if (configured(responseBandwidth)) {
    validatePercentage(v, 'conf.responseBandwidth', responseBandwidth.percentage);
    const { limit } = responseBandwidth;
    if (limit === undefined) v.add('conf.responseBandwidth.limit', 'cannot be empty');
    else if (!BANDWIDTH_LIMIT.test(limit)) v.add('conf.responseBandwidth.limit', 'has to be in kbps/mbps/gbps units');
  }
}

export function validateFaultInjection(spec: FaultInjectionSpec) {
  const v = new Violations();
  validateSelectors(v, 'sources', spec.sources, SELECTOR_PROFILES.any);
  validateSelectors(v, 'destinations', spec.destinations, DESTINATION_RULES);
  validateConf(v, spec.conf);
  return v.list;
}

export const faultInjectionKind = defineKind({
  name: 'FaultInjection',
  cliNames: { singular: 'fault-injection', plural: 'fault-injections' },
  path: 'fault-injections',
  scope: 'mesh',
  displayName: 'Fault Injections',
  singularDisplayName: 'Fault Injection',
  selection: 'sourcesDestinations',
  reach: 'destinationsAndSenders',
  affects: 'selectedProxies',
  schema: FaultInjectionSpecSchema,
  validate: validateFaultInjection,
  example: demo.inMesh('backend-delay', {
    sources: demo.FROM_WEB,
    destinations: [{ match: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http' } }],
    conf: { delay: { percentage: 50, value: '0.100s' } },
  }),
});
