import { z } from 'zod';
import * as demo from '../examples.js';
import { defineKind } from '../kind.js';
import { fieldPath, Violations } from '../validation/violations.js';
import { goList, intOrString } from '../wire.js';
import { HeaderMatchSchema, headerSetAndAdd, type HeaderMatch } from './http-headers.js';
import { BackendRefSchema, MUST_BE_DEFINED, MUST_NOT_BE_DEFINED, mustHaveAtLeastOne, TargetRefSchema, validateTargetRef, type TargetRefKind } from './target-ref.js';

const PathMatchSchema = z.object({ value: z.string().min(1), type: z.enum(['Exact', 'PathPrefix', 'RegularExpression']) });

export const HttpRouteMatchSchema = z.object({
  path: PathMatchSchema.optional(),
  method: z.enum(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']).optional(),
  queryParams: goList(z.object({ type: z.enum(['Exact', 'RegularExpression']), name: z.string().min(1), value: z.string() })),
  headers: goList(HeaderMatchSchema),
});
export type HttpRouteMatch = z.infer<typeof HttpRouteMatchSchema>;

const HeaderModifierSchema = z.object({ ...headerSetAndAdd, remove: goList(z.string(), 16) });

/** A hostname without wildcards. */
const PreciseHostnameSchema = z.string().min(1).max(253).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);

const PathRewriteSchema = z.object({
  type: z.enum(['ReplaceFullPath', 'ReplacePrefixMatch']),
  replaceFullPath: z.string().optional(),
  replacePrefixMatch: z.string().optional(),
});

const FilterSchema = z.object({
  type: z.enum(['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestRedirect', 'URLRewrite', 'RequestMirror']),
  requestHeaderModifier: HeaderModifierSchema.optional(),
  responseHeaderModifier: HeaderModifierSchema.optional(),
  requestRedirect: z
    .object({
      scheme: z.enum(['http', 'https']).optional(),
      hostname: PreciseHostnameSchema.optional(),
      path: PathRewriteSchema.optional(),
      port: z.int().min(1).max(65535).optional(),
      statusCode: z.literal([301, 302, 303, 307, 308]).optional(),
    })
    .optional(),
  urlRewrite: z.object({ hostname: PreciseHostnameSchema.optional(), path: PathRewriteSchema.optional() }).optional(),
  requestMirror: z.object({ percentage: intOrString().optional(), backendRef: TargetRefSchema }).optional(),
});
export type HttpRouteFilter = z.infer<typeof FilterSchema>;

/** What a matched request gets: filters applied, then the backends it is split between. */
export const HttpRouteConfSchema = z.object({
  filters: z.array(FilterSchema).optional(),
  backendRefs: z.array(BackendRefSchema).optional(),
});
export type HttpRouteConf = z.infer<typeof HttpRouteConfSchema>;

export const HttpRouteRuleSchema = z.object({ matches: z.array(HttpRouteMatchSchema).min(1), default: HttpRouteConfSchema });
export type HttpRouteRule = z.infer<typeof HttpRouteRuleSchema>;

export const MeshHTTPRouteSpecSchema = z.object({
  targetRef: TargetRefSchema.prefault({}),
  to: goList(z.object({ targetRef: TargetRefSchema.prefault({}), rules: goList(HttpRouteRuleSchema) })),
});
export type MeshHTTPRouteSpec = z.infer<typeof MeshHTTPRouteSpecSchema>;

const BACKEND_KINDS: readonly TargetRefKind[] = ['MeshService', 'MeshServiceSubset'];
const PREFIX_REWRITE_NEEDS_PREFIX_MATCHES = 'can only appear if all matches match a path prefix';

function validatePathMatch(v: Violations, path: string, match: HttpRouteMatch['path']): void {
  if (!match) return;
  const at = fieldPath(path, 'value');
  const absolute = match.value.startsWith('/');
  if (match.type === 'PathPrefix' && match.value !== '/') {
    if (match.value.endsWith('/')) v.add(at, 'does not need a trailing slash because only a `/`-separated prefix or an entire path is matched');
    if (!absolute) v.add(at, 'must be an absolute path');
  } else if (match.type === 'Exact' && !absolute) {
    v.add(at, 'must be an absolute path');
  }
}

function validateHeaderMatches(v: Violations, path: string, headers: readonly HeaderMatch[]): void {
  headers.forEach((header, i) => {
    // Presence and absence take no value.
    if ((header.type === 'Present' || header.type === 'Absent') && header.value !== undefined) v.add(`${path}[${i}].value`, MUST_NOT_BE_DEFINED);
  });
}

function validateMatches(v: Violations, path: string, matches: readonly HttpRouteMatch[]): void {
  matches.forEach((match, i) => {
    const at = `${path}[${i}]`;
    validatePathMatch(v, fieldPath(at, 'path'), match.path);
    const names = new Set<string>();
    (match.queryParams ?? []).forEach((param, j) => {
      if (names.has(param.name)) v.add(`${at}.queryParams[${j}].name`, `multiple entries for name ${param.name}`);
      names.add(param.name);
    });
    validateHeaderMatches(v, fieldPath(at, 'headers'), match.headers ?? []);
  });
}

function validateHeaderModifier(v: Violations, path: string, modifier: z.infer<typeof HeaderModifierSchema>): void {
  if (!modifier.set && !modifier.add && !modifier.remove) {
    v.add(path, mustHaveAtLeastOne('set', 'add', 'remove'));
    return;
  }
  // A header is set, added or removed once.
  const seen = new Set<string>();
  const check = (list: string, names: readonly string[]) =>
    names.forEach((name, i) => {
      if (seen.has(name)) v.add(`${path}.${list}[${i}].name`, 'duplicate header name');
      seen.add(name);
    });
  check('set', (modifier.set ?? []).map((header) => header.name));
  check('add', (modifier.add ?? []).map((header) => header.name));
  check('remove', modifier.remove ?? []);
}

const onlyPrefixMatches = (matches: readonly HttpRouteMatch[]): boolean => matches.every((match) => match.path?.type === 'PathPrefix');

function validateFilters(v: Violations, path: string, filters: readonly HttpRouteFilter[], matches: readonly HttpRouteMatch[]): void {
  filters.forEach((filter, i) => {
    const at = `${path}[${i}]`;
    switch (filter.type) {
      case 'RequestHeaderModifier':
      case 'ResponseHeaderModifier': {
        const field = filter.type === 'RequestHeaderModifier' ? 'requestHeaderModifier' : 'responseHeaderModifier';
        const modifier = filter[field];
        if (!modifier) v.add(fieldPath(at, field), MUST_BE_DEFINED);
        else validateHeaderModifier(v, fieldPath(at, field), modifier);
        break;
      }
      case 'RequestRedirect':
      case 'URLRewrite': {
        const field = filter.type === 'RequestRedirect' ? 'requestRedirect' : 'urlRewrite';
        const rewrite = filter[field];
        if (!rewrite) v.add(fieldPath(at, field), MUST_BE_DEFINED);
        else if (rewrite.path?.replacePrefixMatch !== undefined && !onlyPrefixMatches(matches)) {
          v.add(fieldPath(at, `${field}.path.replacePrefixMatch`), PREFIX_REWRITE_NEEDS_PREFIX_MATCHES);
        }
        break;
      }
      case 'RequestMirror':
        if (!filter.requestMirror) v.add(fieldPath(at, 'requestMirror'), MUST_BE_DEFINED);
        else validateTargetRef(v, fieldPath(at, 'requestMirror.backendRef'), filter.requestMirror.backendRef, BACKEND_KINDS);
        break;
    }
  });
}

function validateRules(v: Violations, path: string, rules: readonly HttpRouteRule[]): void {
  rules.forEach((rule, i) => {
    const at = `${path}[${i}]`;
    validateMatches(v, fieldPath(at, 'matches'), rule.matches);
    validateFilters(v, fieldPath(at, 'default.filters'), rule.default.filters ?? [], rule.matches);
    (rule.default.backendRefs ?? []).forEach((backend, j) => validateTargetRef(v, `${fieldPath(at, 'default.backendRefs')}[${j}]`, backend, BACKEND_KINDS));
  });
}

export function validateMeshHTTPRoute(spec: MeshHTTPRouteSpec) {
  const v = new Violations();
  validateTargetRef(v, 'spec.targetRef', spec.targetRef, ['Mesh', 'MeshSubset', 'MeshService', 'MeshServiceSubset']);
  (spec.to ?? []).forEach((to, i) => {
    validateTargetRef(v, `spec.to[${i}].targetRef`, to.targetRef, ['MeshService']);
    validateRules(v, `spec.to[${i}].rules`, to.rules ?? []);
  });
  return v.list;
}

export const meshHTTPRouteKind = defineKind({
  name: 'MeshHTTPRoute',
  cliNames: { singular: 'meshhttproute', plural: 'meshhttproutes' },
  path: 'meshhttproutes',
  scope: 'mesh',
  displayName: 'Mesh HTTP Routes',
  singularDisplayName: 'Mesh HTTP Route',
  targetRefPolicy: { from: false, to: true },
  affects: 'selectedProxies',
  specField: 'spec',
  schema: MeshHTTPRouteSpecSchema,
  validate: validateMeshHTTPRoute,
  example: demo.inMesh('web-to-backend', {
    spec: {
      targetRef: demo.WEB,
      to: [
        {
          targetRef: demo.BACKEND,
          rules: [
            {
              matches: [{ path: { value: '/api', type: 'PathPrefix' } }],
              default: {
                backendRefs: [
                  { kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v1' }, weight: 90 },
                  { kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v2' }, weight: 10 },
                ],
              },
            },
          ],
        },
      ],
    },
  }),
});
