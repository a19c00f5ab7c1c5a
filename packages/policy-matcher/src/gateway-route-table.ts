// The route table of a gateway host (docs/matching.md, Builtin gateways): one entry per rule and match of the MeshGatewayRoutes
// serving it, prefix matches widened to whole path segments, most specific first. Destination
// policies are filled in by the caller.
import type { MeshGatewayRouteSpec, TagMap } from '@mesh/model';
import type { PolicyOf } from './snapshot.js';

export const GATEWAY_CONNECTION_POLICY_KINDS = ['CircuitBreaker', 'FaultInjection', 'HealthCheck', 'RateLimit', 'Retry', 'Timeout'] as const;
export type GatewayConnectionPolicyKind = (typeof GATEWAY_CONNECTION_POLICY_KINDS)[number];
export const isGatewayConnectionPolicyKind = (kind: string): kind is GatewayConnectionPolicyKind =>
  (GATEWAY_CONNECTION_POLICY_KINDS as readonly string[]).includes(kind);
export type GatewayDestinationPolicies = { readonly [K in GatewayConnectionPolicyKind]?: PolicyOf<K> };

type HttpRule = NonNullable<NonNullable<NonNullable<MeshGatewayRouteSpec['conf']>['http']>['rules']>[number];
type HttpMatch = NonNullable<HttpRule['matches']>[number];
type Backend = NonNullable<HttpRule['backends']>[number];

export interface GatewayDestination {
  readonly tags: TagMap;
  readonly weight: number;
  /** `http` or `tcp` by the kind of route; absent for a mirror. */
  readonly protocol?: 'http' | 'tcp';
  readonly policies: GatewayDestinationPolicies;
}

export interface NameValue {
  readonly name: string;
  readonly value: string;
}

/** How a request is matched; TCP entries leave everything empty. */
export interface GatewayRouteMatch {
  readonly exactPath?: string;
  readonly prefixPath?: string;
  readonly regexPath?: string;
  readonly method?: string;
  readonly exactHeaders: readonly NameValue[];
  readonly regexHeaders: readonly NameValue[];
  readonly absentHeaders: readonly string[];
  readonly presentHeaders: readonly string[];
  readonly exactQuery: readonly NameValue[];
  readonly regexQuery: readonly NameValue[];
}

export interface PathRewrite {
  readonly replaceFullPath?: string;
  readonly replacePrefixMatch?: string;
}

export interface GatewayRewrite extends PathRewrite {
  readonly hostToBackendHostname: boolean;
}

export interface GatewayRedirect {
  readonly status: number;
  readonly scheme?: string;
  readonly host?: string;
  readonly port?: number;
  readonly pathRewrite?: PathRewrite;
}

export interface HeaderChanges {
  readonly replace: readonly NameValue[];
  readonly append: readonly NameValue[];
  readonly remove: readonly string[];
}

/** One row of a virtual host's route table: a rule of a route under one of its matches. */
export interface GatewayRouteEntry {
  /** The MeshGatewayRoute's name. */
  readonly route: string;
  readonly match: GatewayRouteMatch;
  readonly forwards: readonly GatewayDestination[];
  readonly mirror?: { readonly percentage: number; readonly destination: GatewayDestination };
  readonly redirect?: GatewayRedirect;
  readonly rewrite?: GatewayRewrite;
  readonly requestHeaders?: HeaderChanges;
  readonly responseHeaders?: HeaderChanges;
}

type Filter = NonNullable<HttpRule['filters']>[number];
type Rewrite = NonNullable<Filter['rewrite']>;
type HeaderFilter = NonNullable<Filter['requestHeader']>;

const nameValues = (headers: ReadonlyArray<{ name?: string | undefined; value?: string | undefined }> | undefined): NameValue[] =>
  (headers ?? []).map((header) => ({ name: header.name ?? '', value: header.value ?? '' }));

/** Several header filters of a rule add up. */
const addHeaderChanges = (known: HeaderChanges | undefined, filter: HeaderFilter): HeaderChanges => ({
  replace: [...(known?.replace ?? []), ...nameValues(filter.set)],
  append: [...(known?.append ?? []), ...nameValues(filter.add)],
  remove: [...(known?.remove ?? []), ...(filter.remove ?? [])],
});

const EMPTY_MATCH: GatewayRouteMatch = {
  exactHeaders: [],
  regexHeaders: [],
  absentHeaders: [],
  presentHeaders: [],
  exactQuery: [],
  regexQuery: [],
};

function routeMatchOf(match: HttpMatch): GatewayRouteMatch {
  const path = match.path;
  const pathMatch: Partial<GatewayRouteMatch> =
    path === undefined
      ? { prefixPath: '/' } // Envoy needs a path match: any path, the other criteria still apply.
      : path.match === 'PREFIX'
        ? { prefixPath: path.value ?? '' }
        : path.match === 'REGEX'
          ? { regexPath: path.value ?? '' }
          : { exactPath: path.value ?? '' };
  const headers = match.headers ?? [];
  // EXACT is the enums' zero value, absent in the wire form.
  const headersMatching = (kind: string) => headers.filter((header) => (header.match ?? 'EXACT') === kind);
  const queryMatching = (kind: string) => (match.queryParameters ?? []).filter((query) => (query.match ?? 'EXACT') === kind);
  return {
    ...EMPTY_MATCH,
    ...pathMatch,
    ...(match.method && match.method !== 'NONE' ? { method: match.method } : {}),
    exactHeaders: nameValues(headersMatching('EXACT')),
    regexHeaders: nameValues(headersMatching('REGEX')),
    absentHeaders: headersMatching('ABSENT').map((header) => header.name ?? ''),
    presentHeaders: headersMatching('PRESENT').map((header) => header.name ?? ''),
    exactQuery: nameValues(queryMatching('EXACT')),
    regexQuery: nameValues(queryMatching('REGEX')),
  };
}

const pathRewriteOf = (rewrite: Rewrite | undefined): PathRewrite | undefined =>
  rewrite?.replaceFull !== undefined
    ? { replaceFullPath: rewrite.replaceFull }
    : rewrite?.replacePrefixMatch !== undefined
      ? { replacePrefixMatch: rewrite.replacePrefixMatch }
      : undefined;

const destinationOf = (backend: Backend, protocol: GatewayDestination['protocol']): GatewayDestination => ({
  tags: backend.destination ?? {},
  weight: backend.weight ?? 0,
  ...(protocol ? { protocol } : {}),
  policies: {},
});

/** A rule's action and filters; its matches are applied per entry. */
function httpEntryOf(route: string, rule: HttpRule): Omit<GatewayRouteEntry, 'match'> {
  let entry: Omit<GatewayRouteEntry, 'match'> = { route, forwards: (rule.backends ?? []).map((backend) => destinationOf(backend, 'http')) };
  for (const filter of rule.filters ?? []) {
    if (filter.redirect) {
      const { redirect } = filter;
      const pathRewrite = pathRewriteOf(redirect.path);
      entry = {
        ...entry,
        redirect: {
          status: redirect.statusCode ?? 0,
          ...(redirect.scheme ? { scheme: redirect.scheme } : {}),
          ...(redirect.hostname ? { host: redirect.hostname } : {}),
          ...(redirect.port ? { port: redirect.port } : {}),
          ...(pathRewrite ? { pathRewrite } : {}),
        },
      };
    } else if (filter.mirror) {
      const destination = { tags: filter.mirror.backend?.destination ?? {}, weight: 0, policies: {} };
      entry = { ...entry, mirror: { percentage: filter.mirror.percentage ?? 0, destination } };
    } else if (filter.requestHeader) {
      entry = { ...entry, requestHeaders: addHeaderChanges(entry.requestHeaders, filter.requestHeader) };
    } else if (filter.responseHeader) {
      entry = { ...entry, responseHeaders: addHeaderChanges(entry.responseHeaders, filter.responseHeader) };
    } else if (filter.rewrite) {
      entry = { ...entry, rewrite: { ...pathRewriteOf(filter.rewrite), hostToBackendHostname: filter.rewrite.hostToBackendHostname ?? false } };
    }
  }
  return entry;
}

function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const values = map.get(key);
  if (values) values.push(value);
  else map.set(key, [value]);
}

const trimTrailingSlashes = (path: string): string => path.replace(/\/+$/, '');

/**
 * Prefix matches work on whole path segments: `/api` becomes the prefix `/api/` plus the exact
 * path `/api` (unless a rule already matches `/api` exactly), and prefix rewrites follow.
 */
function expandPrefixEntries(prefixEntries: Map<string, GatewayRouteEntry[]>, exactEntries: Map<string, GatewayRouteEntry[]>): GatewayRouteEntry[] {
  const expanded: GatewayRouteEntry[] = [];
  for (const [path, entries] of prefixEntries) {
    const exactPath = trimTrailingSlashes(path);
    const hasExactMatch = exactEntries.has(exactPath);
    for (const entry of entries) {
      const rewritePrefix = entry.rewrite?.replacePrefixMatch;
      const redirectPrefix = entry.redirect?.pathRewrite?.replacePrefixMatch;
      const rewriteBase = rewritePrefix === undefined ? undefined : trimTrailingSlashes(rewritePrefix);
      const redirectBase = redirectPrefix === undefined ? undefined : trimTrailingSlashes(redirectPrefix);
      const prefixed: GatewayRouteEntry = {
        ...entry,
        match: { ...entry.match, prefixPath: `${exactPath}/` },
        ...(entry.rewrite && rewriteBase !== undefined ? { rewrite: { ...entry.rewrite, replacePrefixMatch: `${rewriteBase}/` } } : {}),
        ...(entry.redirect && redirectBase !== undefined ? { redirect: { ...entry.redirect, pathRewrite: { replacePrefixMatch: `${redirectBase}/` } } } : {}),
      };
      expanded.push(prefixed);
      if (exactPath === '' || hasExactMatch) continue;
      const { prefixPath: _, ...withoutPrefix } = prefixed.match;
      const exact: GatewayRouteEntry = {
        ...prefixed,
        match: { ...withoutPrefix, exactPath },
        ...(rewriteBase !== undefined ? { rewrite: { replaceFullPath: rewriteBase || '/', hostToBackendHostname: false } } : {}),
        ...(prefixed.redirect && redirectBase !== undefined ? { redirect: { ...prefixed.redirect, pathRewrite: { replaceFullPath: redirectBase || '/' } } } : {}),
      };
      append(exactEntries, exactPath, exact);
    }
  }
  return expanded;
}

/** The reference's route order: exact before prefix before regex paths, longer first, then method, header and query counts. */
function isMoreSpecific(a: GatewayRouteMatch, b: GatewayRouteMatch): boolean {
  const byPath = (left: string | undefined, right: string | undefined): boolean | undefined => {
    if (left) {
      if (!right || left.length > right.length) return true;
      if (left.length < right.length) return false;
      return undefined;
    }
    return right ? false : undefined;
  };
  const byExact = byPath(a.exactPath, b.exactPath);
  if (byExact !== undefined) return byExact;
  const byPrefix = byPath(a.prefixPath, b.prefixPath);
  if (byPrefix !== undefined) return byPrefix;
  if (a.regexPath || b.regexPath) {
    if (!a.regexPath) return false;
    // Equal-length regexes are not ordered further.
    return !b.regexPath || a.regexPath.length > b.regexPath.length;
  }
  if (a.method && !b.method) return true;
  if (!a.method && b.method) return false;
  const headers = (m: GatewayRouteMatch) => m.exactHeaders.length + m.regexHeaders.length + m.absentHeaders.length + m.presentHeaders.length;
  if (headers(a) !== headers(b)) return headers(a) > headers(b);
  const queries = (m: GatewayRouteMatch) => m.exactQuery.length + m.regexQuery.length;
  if (queries(a) !== queries(b)) return queries(a) > queries(b);
  const path = (m: GatewayRouteMatch) => `${m.exactPath ?? ''}${m.prefixPath ?? ''}${m.regexPath ?? ''}`;
  return path(a) < path(b);
}

const bySpecificity = (a: GatewayRouteEntry, b: GatewayRouteEntry): number =>
  isMoreSpecific(a.match, b.match) ? -1 : isMoreSpecific(b.match, a.match) ? 1 : 0;

/** The entries of the routes' rules; their destinations carry no policies yet. */
export function routeTableOf(routes: readonly PolicyOf<'MeshGatewayRoute'>[]): GatewayRouteEntry[] {
  const entries: GatewayRouteEntry[] = [];
  const exactEntries = new Map<string, GatewayRouteEntry[]>();
  const prefixEntries = new Map<string, GatewayRouteEntry[]>();
  for (const route of routes) {
    for (const rule of route.spec.conf?.http?.rules ?? []) {
      const base = httpEntryOf(route.name, rule);
      for (const ruleMatch of rule.matches ?? []) {
        const entry = { ...base, match: routeMatchOf(ruleMatch) };
        if (entry.match.exactPath) append(exactEntries, entry.match.exactPath, entry);
        else if (entry.match.prefixPath) append(prefixEntries, entry.match.prefixPath, entry);
        else entries.push(entry);
      }
    }
    for (const rule of route.spec.conf?.tcp?.rules ?? []) {
      entries.push({ route: route.name, match: EMPTY_MATCH, forwards: (rule.backends ?? []).map((backend) => destinationOf(backend, 'tcp')) });
    }
  }
  entries.push(...expandPrefixEntries(prefixEntries, exactEntries));
  for (const exact of exactEntries.values()) entries.push(...exact);
  return entries.sort(bySpecificity);
}
