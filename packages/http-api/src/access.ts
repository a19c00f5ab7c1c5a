// Who is calling and what they may do (docs/tokens.md): localhost is admin unless configured
// otherwise (but not a web page the caller's browser shows, nor a host name other than loopback's),
// and so is a verified client certificate when client certificates are configured;
// other callers present a user token (`Authorization: Bearer <jwt>`); static rules
// name the users and groups allowed to generate tokens and to see configuration dumps.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { DomainError } from '@mesh/model';
import { ADMIN, ANONYMOUS, type Caller } from '@mesh/resource-manager';
import type { TokenService } from '@mesh/tokens';
import type { Request } from 'express';
import { isInternalRequest } from './internal-requests.js';

export { ADMIN, ANONYMOUS, requireAccess, type Caller } from '@mesh/resource-manager';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
/** `localhost` or a loopback address (IPv6 in brackets), with or without a port: a Host header that names this machine. */
const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\]|\[::ffff:127(?:\.\d{1,3}){3}\])(?::\d{1,5})?$/i;
const AUTHENTICATED = 'mesh-system:authenticated';

/** Users and groups allowed an action (`access.static.<rule>`). */
export interface AccessRule {
  users: readonly string[];
  groups: readonly string[];
}

export type StaticRuleName = 'generateDpToken' | 'generateZoneToken' | 'generateUserToken' | 'viewConfigDump' | 'viewStats' | 'viewClusters';

export interface AccessOptions {
  localhostIsAdmin: boolean;
  /** A client certificate the HTTPS server verified (against `apiServer.auth.clientCertsDir`) makes its caller admin. */
  clientCertsAreAdmins?: boolean;
  /** Verifies user tokens; without it a bearer token cannot be verified and is refused. */
  tokens?: TokenService;
  rules: Readonly<Record<StaticRuleName, AccessRule>>;
}

const ADMINS_ONLY: AccessRule = { users: [ADMIN.name], groups: [ADMIN.name] };

/** Admins alone, for every rule: what the reference's defaults give token generation. */
export const ADMIN_ONLY_RULES: Readonly<Record<StaticRuleName, AccessRule>> = {
  generateDpToken: ADMINS_ONLY,
  generateZoneToken: ADMINS_ONLY,
  generateUserToken: ADMINS_ONLY,
  viewConfigDump: ADMINS_ONLY,
  viewStats: ADMINS_ONLY,
  viewClusters: ADMINS_ONLY,
};

const callers = new WeakMap<Request, Caller>();

/**
 * The origins, besides the API's own, whose web pages may act as the localhost admin: those
 * `apiServer.corsAllowedDomains` names one by one. Its `.*` (and an empty list), which let every
 * origin read the API, trust none; `null` (sandboxed frames, local files) is never trusted. The
 * GUI is served on the API's own origin, so it needs no entry here.
 */
export function trustedPageOrigins(corsAllowedDomains: readonly string[]): ReadonlySet<string> {
  return new Set(corsAllowedDomains.map((domain) => domain.toLowerCase()).filter((origin) => origin !== '.*' && origin !== 'null'));
}

/**
 * Establishes the caller of a request, once, before its handler runs; handlers read it with
 * `callerOf`. A loopback caller is admin (when configured so) whatever token it sends, unless
 * it names another host than loopback's or comes from a web page of an untrusted origin; a
 * bearer token that does not verify is a 401; no token (or another scheme) leaves the caller anonymous.
 * Forwarding headers are never looked at: only the connection's own address counts.
 * Returns a promise only when a token has to be verified; every other caller is known at once,
 * and waiting on a promise per request would cost more than telling them apart.
 */
export function authenticate(req: Request, options: AccessOptions, pageOrigins: ReadonlySet<string>): Promise<void> | undefined {
  const caller = identifyCaller(req, options, pageOrigins);
  if (!(caller instanceof Promise)) {
    callers.set(req, caller);
    return undefined;
  }
  return caller.then((verified) => {
    callers.set(req, verified);
  });
}

/** The caller `authenticate` established for this request. */
export function callerOf(req: Request): Caller {
  const caller = callers.get(req);
  if (!caller) throw new Error('request handled before authentication');
  return caller;
}

const unauthenticated = () => new DomainError('unauthenticated', 'Unauthenticated', { title: 'Invalid authentication data' });

/**
 * Whether a loopback connection speaks for this machine's user. A browser connects from loopback
 * for any page it shows: a page of another origin announces itself with `Origin` (`null` from a
 * sandbox or a file), and a page of a DNS name rebound to 127.0.0.1 sends that name as `Host`.
 * Tools like curl and meshctl send no `Origin`.
 */
function speaksForLocalUser(req: IncomingMessage, pageOrigins: ReadonlySet<string>): boolean {
  const host = req.headers.host;
  if (host === undefined || !LOOPBACK_HOST.test(host)) return false;
  const origin = req.headers.origin?.toLowerCase();
  if (origin === undefined) return true;
  const ownOrigin = `${(req.socket as TLSSocket).encrypted ? 'https' : 'http'}://${host.toLowerCase()}`;
  return origin === ownOrigin || pageOrigins.has(origin);
}

/** The caller, when it is known without checking a bearer token; undefined when a token is to be checked. */
export function knownCaller(req: IncomingMessage, options: AccessOptions, pageOrigins: ReadonlySet<string>): Caller | undefined {
  if (isInternalRequest(req)) return ADMIN;
  if (options.localhostIsAdmin && LOOPBACK.has(req.socket.remoteAddress ?? '') && speaksForLocalUser(req, pageOrigins)) return ADMIN;
  if (options.clientCertsAreAdmins && (req.socket as TLSSocket).authorized === true) return ADMIN;
  return req.headers.authorization?.startsWith('Bearer ') ? undefined : ANONYMOUS;
}

function identifyCaller(req: Request, options: AccessOptions, pageOrigins: ReadonlySet<string>): Caller | Promise<Caller> {
  const known = knownCaller(req, options, pageOrigins);
  if (known) return known;
  if (!options.tokens) throw unauthenticated();
  return verifyToken(options.tokens, req.headers.authorization!.slice('Bearer '.length).trim());
}

async function verifyToken(tokens: TokenService, token: string): Promise<Caller> {
  const verified = await tokens.verifyUserToken(token);
  if (!verified.ok) throw unauthenticated();
  return { name: verified.claims.name, groups: [...verified.claims.groups.filter((g) => g !== AUTHENTICATED), AUTHENTICATED] };
}

/** Refuses a caller the static rule does not name (403 `action not allowed`). */
export function requireRule(caller: Caller, options: AccessOptions, rule: StaticRuleName): void {
  const allowed = options.rules[rule];
  if (allowed.users.includes(caller.name) || caller.groups.some((group) => allowed.groups.includes(group))) return;
  throw new DomainError('forbidden', 'action not allowed', { title: 'Access Denied' });
}
