// MeshHTTPRoute (docs/policies.md): once a rule of any MeshHTTPRoute applies to the proxy, the
// listeners of its HTTP and HTTP/2 outbounds are rendered from the routes (the outbound side leaves
// them out): per rule, routes for its matches (named after them) with its filters, to its backends
// split by weight, then a catch-all route to the outbound's service; and a cluster per backend.
import type { HttpRouteFilter, HttpRouteMatch, HttpRouteRule } from '@mesh/model';
import { isSubset, ruleMatchesHash } from '@mesh/policy-matcher';
import type { JsonObject } from '../envoy.js';
import { fractionalPercent, httpConnectionManager, httpConnectionManagerFilter } from '../filters.js';
import { outboundRouteName, serializeTagsHeader, TAGS_HEADER } from '../names.js';
import { isHttpLike, type Protocol } from '../protocol.js';
import { ORIGIN } from '../resource-set.js';
import { decimalValue, isObject, listOf, meshServiceSubset, outboundSites, type Plugin, type PluginInput, type Rules, serviceProtocol } from './common.js';
import { headerMatcher, regexMatcher } from './header-match.js';
import { outboundListener, RouteBackends, type Split } from './route-backends.js';

type BackendRef = NonNullable<HttpRouteRule['default']['backendRefs']>[number];
type HeaderModifier = NonNullable<HttpRouteFilter['requestHeaderModifier']>;
type PathRewrite = NonNullable<NonNullable<HttpRouteFilter['urlRewrite']>['path']>;

/** Routes split between backends of these protocols only (gRPC keeps the outbound side's listener). */
const HTTP_PROTOCOLS: ReadonlySet<Protocol> = new Set(['http', 'http2']);

const CATCH_ALL_PATH: NonNullable<HttpRouteMatch['path']> = { value: '/', type: 'PathPrefix' };
const CATCH_ALL_RULE: HttpRouteRule = { matches: [{ path: CATCH_ALL_PATH, queryParams: undefined, headers: undefined }], default: {} };

interface Route {
  readonly matches: readonly HttpRouteMatch[];
  /** The name of its Envoy routes: a hash of its matches. */
  readonly name: string;
  readonly filters: readonly HttpRouteFilter[];
  readonly backendRefs: readonly BackendRef[];
}

/** The matches of a rule, a path where one is missing (Envoy needs one), and their hash: rules are shared between proxies. */
const preparedMatches = new WeakMap<HttpRouteRule, { matches: readonly HttpRouteMatch[]; name: string }>();

function matchesOf(rule: HttpRouteRule): { matches: readonly HttpRouteMatch[]; name: string } {
  let prepared = preparedMatches.get(rule);
  if (!prepared) {
    const matches = rule.matches.map((match) => (match.path ? match : { ...match, path: CATCH_ALL_PATH }));
    prepared = { matches, name: ruleMatchesHash(matches) };
    preparedMatches.set(rule, prepared);
  }
  return prepared;
}

const isCatchAll = (matches: readonly HttpRouteMatch[]): boolean =>
  matches.length === 1 &&
  matches[0]?.path?.value === '/' &&
  matches[0].path.type === 'PathPrefix' &&
  matches[0].method === undefined &&
  matches[0].queryParams === undefined &&
  matches[0].headers === undefined;

/**
 * The routes of an outbound's service: the rules of the least specific rule holding the service
 * (the only one: `to` entries name services), then a catch-all to the service unless a rule is
 * one; none for a service not speaking HTTP that no rule names.
 */
function routesOf(rules: Rules<'MeshHTTPRoute'>, service: string, protocol: Protocol): Route[] {
  let httpRules: readonly HttpRouteRule[] = [];
  for (const rule of rules) if (isSubset(rule.subset, meshServiceSubset(service))) httpRules = rule.conf.Rules ?? [];
  if (httpRules.length === 0 && !isHttpLike(protocol)) return [];
  const all = httpRules.some((rule) => isCatchAll(rule.matches)) ? httpRules : [...httpRules, CATCH_ALL_RULE];
  return all.map((rule) => ({
    ...matchesOf(rule),
    filters: rule.default.filters ?? [],
    backendRefs: rule.default.backendRefs ?? [{ kind: 'MeshService', name: service, tags: undefined, mesh: undefined, weight: 100 }],
  }));
}

interface EnvoyMatch {
  readonly match: JsonObject;
  /** Made from a path prefix match: prefix rewrites apply. */
  readonly fromPrefix: boolean;
}

/** One Envoy match per match, two for a path prefix other than `/` (the path itself, and below it). */
function envoyMatches(matches: readonly HttpRouteMatch[]): EnvoyMatch[] {
  return matches.flatMap((match) => {
    const path = match.path ?? CATCH_ALL_PATH;
    let paths: JsonObject[];
    if (path.type === 'Exact') paths = [{ path: path.value }];
    else if (path.type === 'RegularExpression') paths = [{ safeRegex: regexMatcher(path.value) }];
    else if (path.value === '/') paths = [{ prefix: '/' }];
    else {
      const trimmed = path.value.replace(/\/$/, '');
      paths = [{ path: trimmed }, { prefix: `${trimmed}/` }];
    }
    return paths.map((envoyMatch): EnvoyMatch => {
      const headers: JsonObject[] = [];
      if (match.method !== undefined) headers.push({ name: ':method', stringMatch: { exact: match.method } });
      const seen = new Set<string>();
      for (const header of match.headers ?? []) {
        if (seen.has(header.name)) continue;
        seen.add(header.name);
        headers.push(headerMatcher(header, { emptyPrefixIsPresence: true }));
      }
      if (headers.length > 0) envoyMatch.headers = headers;
      const queryNames = new Set<string>();
      const queryParameters: JsonObject[] = [];
      for (const param of match.queryParams ?? []) {
        if (queryNames.has(param.name)) continue;
        queryNames.add(param.name);
        queryParameters.push({ name: param.name, stringMatch: param.type === 'Exact' ? { exact: param.value } : { safeRegex: regexMatcher(param.value) } });
      }
      if (queryParameters.length > 0) envoyMatch.queryParameters = queryParameters;
      return { match: envoyMatch, fromPrefix: path.type === 'PathPrefix' };
    });
  });
}

function routeAction(split: readonly Split[]): JsonObject {
  // The request timeout is MeshTimeout's to set.
  const action: JsonObject = { timeout: '0s' };
  if (split.length === 1) action.cluster = split[0]?.clusterName ?? '';
  else action.weightedClusters = { clusters: split.map((backend) => ({ name: backend.clusterName, weight: backend.weight })) };
  if (split.some((backend) => backend.external)) action.autoHostRewrite = true;
  return action;
}

/** Headers to set (the first value of each replacing) and to add; a value with commas is several. */
function headerOptions(modifier: HeaderModifier): JsonObject[] {
  const options: JsonObject[] = [];
  for (const header of modifier.set ?? []) header.value.split(',').forEach((value, at) => options.push({ header: { key: header.name, value }, append: at > 0 }));
  for (const header of modifier.add ?? []) for (const value of header.value.split(',')) options.push({ header: { key: header.name, value }, append: true });
  return options;
}

function modifyHeaders(route: JsonObject, modifier: HeaderModifier | undefined, direction: 'request' | 'response'): void {
  if (!modifier) return;
  const options = headerOptions(modifier);
  if (options.length > 0) listOf(route, `${direction}HeadersToAdd`).push(...options);
  if (modifier.remove?.length) listOf(route, `${direction}HeadersToRemove`).push(...modifier.remove);
}

const fullPathRewrite = (substitution: string): JsonObject => ({ pattern: regexMatcher('.*'), substitution });

/**
 * A path rewrite into a route action or a redirect: the whole path, or the matched prefix, only
 * for the routes of a prefix match (the exact `/prefix` route has its whole path replaced, the
 * `/prefix/` one its prefix).
 */
function rewritePath(target: JsonObject, path: PathRewrite | undefined, route: JsonObject, fromPrefix: boolean): void {
  if (!path) return;
  if (path.type === 'ReplaceFullPath') target.regexRewrite = fullPathRewrite(path.replaceFullPath ?? '');
  else if (fromPrefix && isObject(route.match)) {
    if (typeof route.match.path === 'string' && route.match.path !== '') target.regexRewrite = fullPathRewrite(path.replacePrefixMatch ?? '');
    else if (typeof route.match.prefix === 'string' && route.match.prefix !== '') target.prefixRewrite = path.replacePrefixMatch ?? '';
  }
}

const REDIRECT_CODES: Readonly<Record<number, string | undefined>> = { 301: undefined, 302: 'FOUND', 303: 'SEE_OTHER', 307: 'TEMPORARY_REDIRECT', 308: 'PERMANENT_REDIRECT' };

function applyFilter(route: JsonObject, filter: HttpRouteFilter, fromPrefix: boolean, backends: RouteBackends): void {
  switch (filter.type) {
    case 'RequestHeaderModifier':
      modifyHeaders(route, filter.requestHeaderModifier, 'request');
      return;
    case 'ResponseHeaderModifier':
      modifyHeaders(route, filter.responseHeaderModifier, 'response');
      return;
    case 'RequestRedirect': {
      const redirect = filter.requestRedirect;
      if (!redirect) return;
      const action: JsonObject = {};
      if (redirect.hostname !== undefined) action.hostRedirect = redirect.hostname;
      if (redirect.port !== undefined) action.portRedirect = redirect.port;
      if (redirect.scheme !== undefined) action.schemeRedirect = redirect.scheme;
      rewritePath(action, redirect.path, route, fromPrefix);
      // MOVED_PERMANENTLY (301), the default, is the enum's zero value.
      const code = REDIRECT_CODES[redirect.statusCode ?? 301];
      if (code) action.responseCode = code;
      delete route.route;
      route.redirect = action;
      return;
    }
    case 'URLRewrite': {
      const action = route.route;
      if (!isObject(action) || !filter.urlRewrite) return;
      if (filter.urlRewrite.hostname !== undefined) {
        delete action.autoHostRewrite;
        action.hostRewriteLiteral = filter.urlRewrite.hostname;
      }
      rewritePath(action, filter.urlRewrite.path, route, fromPrefix);
      return;
    }
    case 'RequestMirror': {
      const action = route.route;
      const mirror = filter.requestMirror;
      const cluster = mirror && backends.clusterOf(mirror.backendRef);
      if (!isObject(action) || !mirror || cluster === undefined) return;
      const policy: JsonObject = { cluster };
      if (mirror.percentage !== undefined) policy.runtimeFraction = { defaultValue: fractionalPercent(decimalValue(mirror.percentage)) };
      listOf(action, 'requestMirrorPolicies').push(policy);
      return;
    }
  }
}

function envoyRoutes(route: Route, split: readonly Split[], backends: RouteBackends): JsonObject[] {
  return envoyMatches(route.matches).map(({ match, fromPrefix }) => {
    const envoyRoute: JsonObject = { match, name: route.name, route: routeAction(split) };
    for (const filter of route.filters) applyFilter(envoyRoute, filter, fromPrefix, backends);
    return envoyRoute;
  });
}

function httpChain(input: PluginInput, service: string, routes: JsonObject[]): JsonObject {
  const hcm = httpConnectionManager(service, false);
  hcm.normalizePath = true;
  const routeConfig: JsonObject = { name: outboundRouteName(service), validateClusters: false, virtualHosts: [{ name: service, domains: ['*'], routes }] };
  const tagsHeader = serializeTagsHeader(input.state.tagSets);
  if (tagsHeader) routeConfig.requestHeadersToAdd = [{ header: { key: TAGS_HEADER, value: tagsHeader } }];
  hcm.routeConfig = routeConfig;
  return { filters: [httpConnectionManagerFilter(hcm)] };
}

export const applyMeshHTTPRoute: Plugin<'MeshHTTPRoute'> = (input, rules) => {
  if (rules.to.length === 0) return;
  const backends = new RouteBackends(input);
  for (const site of outboundSites(input)) {
    const envoyRoutesOfService: JsonObject[] = [];
    for (const route of routesOf(rules.to, site.service, serviceProtocol(input.state, site.service))) {
      const split = backends.split(route.backendRefs, HTTP_PROTOCOLS);
      if (!split) continue;
      // A mirror's backend needs its cluster too.
      for (const filter of route.filters) if (filter.type === 'RequestMirror' && filter.requestMirror) backends.split([{ ...filter.requestMirror.backendRef, weight: 1 }], HTTP_PROTOCOLS);
      envoyRoutesOfService.push(...envoyRoutes(route, split, backends));
    }
    if (envoyRoutesOfService.length === 0) continue;
    input.resources.addListener(ORIGIN.outbound, outboundListener(input, site, httpChain(input, site.service, envoyRoutesOfService)));
  }
  backends.addResources();
};
