// Who is calling (rest-contract §1 "Auth"): localhost is admin unless configured otherwise.
import { DomainError } from '@mesh/model';
import { ADMIN, ANONYMOUS, type Caller } from '@mesh/resource-manager';
import type { Request } from 'express';

export { ADMIN, ANONYMOUS, requireAccess, type Caller } from '@mesh/resource-manager';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export interface AccessOptions {
  localhostIsAdmin: boolean;
}

const callers = new WeakMap<Request, Caller>();

/**
 * Establishes the caller of a request, once, before its handler runs (401 for a token that
 * cannot be verified); handlers read it with `callerOf`.
 */
export function authenticate(req: Request, options: AccessOptions): void {
  callers.set(req, identifyCaller(req, options));
}

/** The caller `authenticate` established for this request. */
export function callerOf(req: Request): Caller {
  const caller = callers.get(req);
  if (!caller) throw new Error('request handled before authentication');
  return caller;
}

/**
 * The caller of a request. User tokens are not issued by this control plane yet, so a bearer
 * token cannot be verified and is refused rather than silently ignored. As in the reference, a
 * localhost admin stays admin: the token is only looked at for an otherwise anonymous caller.
 */
function identifyCaller(req: Request, options: AccessOptions): Caller {
  if (options.localhostIsAdmin && LOOPBACK.has(req.socket.remoteAddress ?? '')) return ADMIN;
  const authorization = req.get('authorization');
  if (authorization && /^bearer\s/i.test(authorization)) {
    throw new DomainError('unauthenticated', 'Unauthenticated', { title: 'Invalid authentication data' });
  }
  return ANONYMOUS;
}
