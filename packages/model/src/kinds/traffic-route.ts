import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { validateServiceToService } from '../validation/policy-rules.js';
import { validateSelector, type TagMap } from '../validation/tags.js';
import { fieldPath, indexPath, keyPath, Violations } from '../validation/violations.js';
import { bool, list, message, str, strValue, u32, u32Value, u64 } from '../wire.js';
import { selectorList } from './common.js';
import { messageWithOneof } from './oneof.js';

/**
 * A destination tag map, kept even when empty: the reference tells `{}` (a destination without
 * tags) from an absent one. An empty one never passes validation, so it is never stored.
 */
const destinationMap = () => z.record(z.string(), z.string()).optional();

const SplitSchema = message({ weight: u32Value(), destination: destinationMap() });

// Oneof members keep their presence: a string member set to "" is still the chosen one.
const LoadBalancerSchema = messageWithOneof(
  {
    roundRobin: message({}).optional(),
    leastRequest: message({ choiceCount: u32() }).optional(),
    ringHash: message({ hashFunction: str(), minRingSize: u64(), maxRingSize: u64() }).optional(),
    random: message({}).optional(),
    maglev: message({}).optional(),
  },
  ['roundRobin', 'leastRequest', 'ringHash', 'random', 'maglev'],
);

const StringMatcherSchema = messageWithOneof({ prefix: strValue(), exact: strValue(), regex: strValue() }, ['prefix', 'exact', 'regex']);

const MatchSchema = message({
  method: StringMatcherSchema.optional(),
  path: StringMatcherSchema.optional(),
  // Kept even when empty: `{}` is reported, unlike an absent map.
  headers: z.record(z.string(), StringMatcherSchema).optional(),
});

const RegexReplaceSchema = message({ pattern: str(), substitution: str() });

const HeadersSchema = message({
  add: list(message({ name: str(), value: str(), append: bool() })),
  remove: list(message({ name: str() })),
});

const ModifySchema = message({
  path: messageWithOneof({ rewritePrefix: strValue(), regex: RegexReplaceSchema.optional() }, ['rewritePrefix', 'regex']).optional(),
  host: messageWithOneof({ value: strValue(), fromPath: RegexReplaceSchema.optional() }, ['value', 'fromPath']).optional(),
  requestHeaders: HeadersSchema.optional(),
  responseHeaders: HeadersSchema.optional(),
});

const HttpRouteSchema = message({
  match: MatchSchema.optional(),
  modify: ModifySchema.optional(),
  split: list(SplitSchema),
  destination: destinationMap(),
});

const ConfSchema = message({
  split: list(SplitSchema),
  loadBalancer: LoadBalancerSchema.optional(),
  destination: destinationMap(),
  http: list(HttpRouteSchema),
});

export const TrafficRouteSpecSchema = message({
  sources: selectorList(),
  destinations: selectorList(),
  conf: ConfSchema.optional(),
});
export type TrafficRouteSpec = z.infer<typeof TrafficRouteSpecSchema>;
type Conf = z.infer<typeof ConfSchema>;
type Split = z.infer<typeof SplitSchema>;
type HttpRoute = z.infer<typeof HttpRouteSchema>;
type Match = z.infer<typeof MatchSchema>;
type StringMatcher = z.infer<typeof StringMatcherSchema>;
type Modify = z.infer<typeof ModifySchema>;
type RegexReplace = z.infer<typeof RegexReplaceSchema>;
type Headers = z.infer<typeof HeadersSchema>;

const DESTINATION_TAGS = { requireAtLeastOneTag: true, requireService: true };
const RING_HASH_FUNCTIONS = ['XX_HASH', 'MURMUR_HASH_2'];

function validateSplit(v: Violations, path: string, split: Split[]): void {
  split.forEach((entry, i) => {
    const entryPath = indexPath(path, i);
    if (entry.weight === undefined) v.add(fieldPath(entryPath, 'weight'), 'needs to be defined');
    validateSelector(v, fieldPath(entryPath, 'destination'), entry.destination, DESTINATION_TAGS);
  });
  if (split.every((entry) => !entry.weight)) v.add(path, 'there must be at least one split entry with weight above 0');
}

/** Where traffic goes: exactly one of `split` and `destination` (conf level and each http route). */
function validateTarget(v: Violations, path: string, target: { split?: Split[] | undefined; destination?: TagMap | undefined }): void {
  const { split, destination } = target;
  if (split === undefined && destination === undefined) v.add(path, 'requires either "destination" or "split"');
  if (split !== undefined && destination !== undefined) v.add(path, '"split" cannot be defined at the same time as "destination"');
  if (split !== undefined) validateSplit(v, fieldPath(path, 'split'), split);
  if (destination !== undefined) validateSelector(v, fieldPath(path, 'destination'), destination, DESTINATION_TAGS);
}

function validateStringMatcher(v: Violations, path: string, matcher: StringMatcher): void {
  if (matcher.exact !== undefined) return;
  if (matcher.prefix !== undefined) {
    if (matcher.prefix === '') v.add(fieldPath(path, 'prefix'), 'cannot be empty');
  } else if (matcher.regex !== undefined) {
    if (matcher.regex === '') v.add(fieldPath(path, 'regex'), 'cannot be empty');
  } else {
    // "split" (not "prefix") is the reference's wording.
    v.add(path, 'cannot be empty. Available options: "exact", "split" or "regex"');
  }
}

function validateMatch(v: Violations, path: string, match: Match | undefined): void {
  if (!match?.method && !match?.path && !match?.headers) {
    v.add(path, 'must be present and contain at least one of the elements: "method", "path" or "headers"');
    return;
  }
  if (match.method) validateStringMatcher(v, fieldPath(path, 'method'), match.method);
  if (match.path) validateStringMatcher(v, fieldPath(path, 'path'), match.path);
  if (!match.headers) return;
  const headersPath = fieldPath(path, 'headers');
  if (Object.keys(match.headers).length === 0) v.add(headersPath, 'must contain at least one element');
  // Header names in code-unit order, so the report does not depend on the body's key order.
  for (const [name, matcher] of Object.entries(match.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const headerPath = keyPath(headersPath, name);
    if (name === '') v.add(headerPath, 'cannot be empty');
    validateStringMatcher(v, headerPath, matcher);
  }
}

function validateRegexReplace(v: Violations, path: string, replace: RegexReplace): void {
  if (!replace.pattern) v.add(fieldPath(path, 'pattern'), 'cannot be empty');
  if (!replace.substitution) v.add(fieldPath(path, 'substitution'), 'cannot be empty');
}

function validateHeaderName(v: Violations, path: string, name: string | undefined): void {
  if (!name) v.add(path, 'cannot be empty');
  else if (name.startsWith(':') || name === 'host' || name === 'Host') {
    v.add(path, 'host header and HTTP/2 pseudo-headers are not allowed to be modified');
  }
}

function validateHeaders(v: Violations, path: string, headers: Headers): void {
  headers.add?.forEach((header, i) => {
    const headerPath = indexPath(fieldPath(path, 'add'), i);
    validateHeaderName(v, fieldPath(headerPath, 'name'), header.name);
    if (!header.value) v.add(fieldPath(headerPath, 'value'), 'cannot be empty');
  });
  headers.remove?.forEach((header, i) => validateHeaderName(v, fieldPath(indexPath(fieldPath(path, 'remove'), i), 'name'), header.name));
}

function validateModify(v: Violations, path: string, modify: Modify | undefined, match: Match | undefined): void {
  if (modify?.path) {
    const rewritePath = fieldPath(path, 'path');
    const { rewritePrefix, regex } = modify.path;
    if (rewritePrefix !== undefined) {
      const prefixPath = fieldPath(rewritePath, 'rewritePrefix');
      if (rewritePrefix === '') v.add(prefixPath, 'cannot be empty');
      else if (!match?.path?.prefix) v.add(prefixPath, 'can only be set when .http.match.path.prefix is not empty');
    } else if (regex) validateRegexReplace(v, fieldPath(rewritePath, 'regex'), regex);
    else v.add(rewritePath, 'either "rewritePrefix" or "regex" has to be set');
  }
  if (modify?.host) {
    const hostPath = fieldPath(path, 'host');
    const { value, fromPath } = modify.host;
    if (value !== undefined) {
      if (value === '') v.add(fieldPath(hostPath, 'value'), 'cannot be empty');
    } else if (fromPath) validateRegexReplace(v, fieldPath(hostPath, 'fromPath'), fromPath);
    else v.add(hostPath, 'either "value" or "fromPath" has to be set');
  }
  if (modify?.requestHeaders) validateHeaders(v, fieldPath(path, 'requestHeaders'), modify.requestHeaders);
  if (modify?.responseHeaders) validateHeaders(v, fieldPath(path, 'responseHeaders'), modify.responseHeaders);
}

function validateHttpRoute(v: Violations, path: string, route: HttpRoute): void {
  validateMatch(v, fieldPath(path, 'match'), route.match);
  validateModify(v, fieldPath(path, 'modify'), route.modify, route.match);
  validateTarget(v, path, route);
}

function validateConf(v: Violations, conf: Conf | undefined): void {
  if (!conf) {
    v.add('conf', 'cannot be empty');
    return;
  }
  validateTarget(v, 'conf', conf);
  conf.http?.forEach((route, i) => validateHttpRoute(v, indexPath('conf.http', i), route));
  const { leastRequest, ringHash } = conf.loadBalancer ?? {};
  if (leastRequest?.choiceCount === 1) {
    v.add('conf.loadBalancer.leastRequest.choiceCount', 'value must be greater than or equal to 2');
  }
  if (ringHash && !RING_HASH_FUNCTIONS.includes(ringHash.hashFunction ?? '')) {
    v.add('conf.loadBalancer.ringHash.hashFunction', 'must have a valid hash function');
  }
}

export function validateTrafficRoute(spec: TrafficRouteSpec) {
  const v = new Violations();
  validateServiceToService(v, spec);
  validateConf(v, spec.conf);
  return v.list;
}

export const trafficRouteKind = defineKind({
  name: 'TrafficRoute',
  cliNames: { singular: 'traffic-route', plural: 'traffic-routes' },
  path: 'traffic-routes',
  scope: 'mesh',
  displayName: 'Traffic Routes',
  singularDisplayName: 'Traffic Route',
  selection: 'sourcesDestinations',
  affects: 'selectedProxies',
  schema: TrafficRouteSpecSchema,
  validate: validateTrafficRoute,
  example: demo.inMesh('web-to-backend', {
    sources: demo.FROM_WEB,
    destinations: demo.TO_BACKEND,
    conf: {
      split: [
        { weight: 90, destination: { 'mesh.io/service': 'backend', version: 'v1' } },
        { weight: 10, destination: { 'mesh.io/service': 'backend', version: 'v2' } },
      ],
    },
  }),
});
