import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { validatePort } from '../validation/scalars.js';
import { SELECTOR_PROFILES, validateSelector, validateSelectors } from '../validation/tags.js';
import { fieldPath, indexPath, Violations } from '../validation/violations.js';
import { bool, doubleValue, enumOf, list, message, str, stringMap, u32 } from '../wire.js';
import { selectorList } from './common.js';
import { messageWithOneof } from './oneof.js';

const BackendSchema = message({ weight: u32(), destination: stringMap() });
type Backend = z.infer<typeof BackendSchema>;

const MatchSchema = message({
  path: message({ match: enumOf(['EXACT', 'PREFIX', 'REGEX']), value: str() }).optional(),
  method: enumOf(['NONE', 'CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']),
  headers: list(message({ match: enumOf(['EXACT', 'REGEX', 'ABSENT', 'PRESENT']), name: str(), value: str() })),
  queryParameters: list(message({ match: enumOf(['EXACT', 'REGEX']), name: str(), value: str() })),
});
type Match = z.infer<typeof MatchSchema>;

const HeaderSchema = message({ name: str(), value: str() });
const HeaderFilterSchema = message({ set: list(HeaderSchema), add: list(HeaderSchema), remove: list(z.string()) });

// oneof members keep an empty string: setting one to "" still chooses it.
const RewriteSchema = messageWithOneof(
  { replaceFull: z.string().optional(), replacePrefixMatch: z.string().optional(), hostToBackendHostname: bool() },
  ['replaceFull', 'replacePrefixMatch'],
);

const FilterSchema = messageWithOneof(
  {
    requestHeader: HeaderFilterSchema.optional(),
    mirror: message({ backend: BackendSchema.optional(), percentage: doubleValue() }).optional(),
    redirect: message({ scheme: str(), hostname: str(), port: u32(), statusCode: u32(), path: RewriteSchema.optional() }).optional(),
    rewrite: RewriteSchema.optional(),
    responseHeader: HeaderFilterSchema.optional(),
  },
  ['requestHeader', 'mirror', 'redirect', 'rewrite', 'responseHeader'],
);
type Filter = z.infer<typeof FilterSchema>;

const RuleSchema = message({ matches: list(MatchSchema), filters: list(FilterSchema), backends: list(BackendSchema) });
type Rule = z.infer<typeof RuleSchema>;

export const MeshGatewayRouteSpecSchema = message({
  selectors: selectorList(),
  conf: messageWithOneof(
    {
      tcp: message({ rules: list(message({ backends: list(BackendSchema) })) }).optional(),
      http: message({ hostnames: list(z.string()), rules: list(RuleSchema) }).optional(),
    },
    ['tcp', 'http'],
  ).optional(),
});
export type MeshGatewayRouteSpec = z.infer<typeof MeshGatewayRouteSpecSchema>;

/** Headers naming the host, which a backend-hostname rewrite already sets. */
const HOST_HEADERS = new Set([':authority', 'Host', 'host']);

/** A backend's destination; the reference reports it at the backend's own path. */
function validateBackend(v: Violations, path: string, backend: Backend | undefined): void {
  if (backend === undefined) v.add(path, 'cannot be empty');
  else validateSelector(v, path, backend.destination, { requireAtLeastOneTag: true, requireService: true });
}

function validateMatch(v: Violations, path: string, match: Match): void {
  const { path: pathMatch, headers = [], queryParameters = [] } = match;
  if (pathMatch === undefined && match.method === undefined && headers.length === 0 && queryParameters.length === 0) {
    v.add(path, 'cannot be empty');
  }
  // The reference reports the path value at `matches[j].value`.
  if (pathMatch?.match === 'REGEX') {
    if (!pathMatch.value) v.add(fieldPath(path, 'value'), 'cannot be empty');
  } else if (pathMatch !== undefined && !pathMatch.value?.startsWith('/')) {
    v.add(fieldPath(path, 'value'), 'must be an absolute path');
  }
  headers.forEach((header, i) => {
    const at = indexPath(fieldPath(path, 'headers'), i);
    if (!header.name) v.add(fieldPath(at, 'name'), 'cannot be empty');
    const valueForbidden = header.match === 'ABSENT' || header.match === 'PRESENT';
    if (valueForbidden && header.value) v.add(fieldPath(at, 'value'), 'cannot be set');
    else if (!valueForbidden && !header.value) v.add(fieldPath(at, 'value'), 'cannot be empty');
  });
  queryParameters.forEach((query, i) => {
    const at = indexPath(fieldPath(path, 'query_parameters'), i);
    if (!query.name) v.add(fieldPath(at, 'name'), 'cannot be empty');
    if (!query.value) v.add(fieldPath(at, 'value'), 'cannot be empty');
  });
}

interface RuleContext {
  hasPrefixMatch: boolean;
  rewritesHostToBackendHostname: boolean;
}

// Filter paths use the reference's snake_case field names (`request_header`, `status_code`).
function validateFilter(v: Violations, path: string, filter: Filter, rule: RuleContext): void {
  const { requestHeader, redirect, mirror, rewrite } = filter;
  if (requestHeader !== undefined) {
    const at = fieldPath(path, 'request_header');
    const { set = [], add = [], remove = [] } = requestHeader;
    if (set.length === 0 && add.length === 0 && remove.length === 0) v.add(at, 'cannot be empty');
    for (const [operation, headers] of [['set', set], ['add', add]] as const) {
      headers.forEach((header, i) => {
        const headerPath = indexPath(fieldPath(at, operation), i);
        const name = header.name ?? '';
        if (HOST_HEADERS.has(name) && rule.rewritesHostToBackendHostname) {
          v.add(headerPath, `cannot modify '${name}' header, when route has set 'rewrite.host_to_backend_hostname' option`);
        }
        if (name === '') v.add(fieldPath(headerPath, 'name'), 'cannot be empty');
        if (!header.value) v.add(fieldPath(headerPath, 'value'), 'cannot be empty');
      });
    }
    remove.forEach((name, i) => {
      if (name === '') v.add(indexPath(fieldPath(at, 'remove'), i), 'cannot be empty');
    });
  }
  if (redirect !== undefined) {
    const at = fieldPath(path, 'redirect');
    if (redirect.port !== undefined) validatePort(v, fieldPath(at, 'port'), redirect.port);
    const status = redirect.statusCode ?? 0;
    if (status < 300 || status > 308) v.add(fieldPath(at, 'status_code'), 'must be in the range [300, 308]');
  }
  if (mirror !== undefined) {
    const at = fieldPath(path, 'mirror');
    if (mirror.percentage === undefined) v.add(fieldPath(at, 'percentage'), 'cannot be empty');
    else if (mirror.percentage < 0 || mirror.percentage > 100) v.add(fieldPath(at, 'percentage'), 'has to be in [0.0 - 100.0] range');
    validateBackend(v, fieldPath(at, 'backend'), mirror.backend);
  }
  if (rewrite?.replacePrefixMatch !== undefined && !rule.hasPrefixMatch) {
    v.add(fieldPath(path, 'rewrite.replacePrefixMatch'), 'cannot be used without a match on path prefix');
  }
}

function validateRule(v: Violations, path: string, rule: Rule): void {
  const { matches = [], filters = [], backends = [] } = rule;
  if (matches.length === 0) {
    v.add(fieldPath(path, 'matches'), 'cannot be empty');
    return;
  }
  matches.forEach((match, j) => validateMatch(v, indexPath(fieldPath(path, 'matches'), j), match));
  // Host rewrites to the backend's hostname are not checked as filters. Like the reference, the
  // other filters are numbered among themselves, so a path index skips those rewrites.
  const context: RuleContext = {
    hasPrefixMatch: matches.some((match) => match.path?.match === 'PREFIX'),
    rewritesHostToBackendHostname: filters.some((filter) => filter.rewrite?.hostToBackendHostname),
  };
  const checkedFilters = filters.filter((filter) => !filter.rewrite?.hostToBackendHostname);
  checkedFilters.forEach((filter, i) => validateFilter(v, indexPath(fieldPath(path, 'filters'), i), filter, context));

  const redirects = checkedFilters.some((filter) => filter.redirect !== undefined);
  if (redirects && filters.length !== 1) {
    // With other filters beside a redirect, whether backends belong here is ambiguous.
    v.add(fieldPath(path, 'filters'), 'redirects cannot be used with other filters');
    return;
  }
  // A redirect answers by itself; anything else forwards to backends.
  if (backends.length === 0 && !redirects) v.add(fieldPath(path, 'backends'), 'cannot be empty');
  if (backends.length > 0 && redirects) v.add(fieldPath(path, 'backends'), 'must be empty when using redirect filters');
  backends.forEach((backend, i) => validateBackend(v, indexPath(fieldPath(path, 'backends'), i), backend));
}

export function validateMeshGatewayRoute(spec: MeshGatewayRouteSpec) {
  const v = new Violations();
  validateSelectors(v, 'selectors', spec.selectors, SELECTOR_PROFILES.service);
  const { tcp, http } = spec.conf ?? {};
  // TCP routes have no rules beyond their schema.
  if (tcp === undefined && http === undefined) v.add('conf', 'cannot be empty');
  if (http !== undefined) {
    if (!http.rules) v.add('conf.http.rules', 'cannot be empty');
    else http.rules.forEach((rule, i) => validateRule(v, indexPath('conf.http.rules', i), rule));
  }
  return v.list;
}

export const meshGatewayRouteKind = defineKind({
  name: 'MeshGatewayRoute',
  cliNames: { singular: 'meshgatewayroute', plural: 'meshgatewayroutes' },
  path: 'meshgatewayroutes',
  scope: 'mesh',
  displayName: 'Mesh Gateway Routes',
  singularDisplayName: 'Mesh Gateway Route',
  selection: 'selectors',
  affects: 'selectedProxies',
  inspectable: false,
  schema: MeshGatewayRouteSpecSchema,
  validate: validateMeshGatewayRoute,
  example: demo.inMesh('edge-to-web', {
    selectors: [{ match: { 'mesh.io/service': 'edge' } }],
    conf: { http: { rules: [{ matches: [{ path: { match: 'PREFIX', value: '/' } }], backends: [{ weight: 1, destination: { 'mesh.io/service': demo.EXAMPLE_SERVICE } }] }] } },
  }),
});
