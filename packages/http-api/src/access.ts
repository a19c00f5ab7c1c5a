// Who is calling (rest-contract §1 "Auth"): localhost is admin unless configured otherwise;
// secrets are for admins only.
import { DomainError, type AnyKind } from '@mesh/model';
import type { Request } from 'express';

export interface Caller {
  name: string;
  groups: string[];
}

export const ADMIN: Caller = { name: 'mesh-system:admin', groups: ['mesh-system:admin', 'mesh-system:authenticated'] };
export const ANONYMOUS: Caller = { name: 'mesh-system:anonymous', groups: ['mesh-system:unauthenticated'] };

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export interface AccessOptions {
  localhostIsAdmin: boolean;
}

/**
 * The caller of a request. User tokens are not issued by this control plane yet, so a bearer
 * token cannot be verified and is refused rather than silently ignored. As in the reference, a
 * localhost admin stays admin: the token is only looked at for an otherwise anonymous caller.
 */
export function identifyCaller(req: Request, options: AccessOptions): Caller {
  if (options.localhostIsAdmin && LOOPBACK.has(req.socket.remoteAddress ?? '')) return ADMIN;
  const authorization = req.get('authorization');
  if (authorization && /^bearer\s/i.test(authorization)) {
    throw new DomainError('unauthenticated', 'Unauthenticated', { title: 'Invalid authentication data' });
  }
  return ANONYMOUS;
}

const isAdmin = (caller: Caller) => caller.name === ADMIN.name || caller.groups.includes(ADMIN.name);

/** Refuses non-admins on admin-only kinds (403, before any lookup). */
export function requireAccess(caller: Caller, kind: AnyKind): void {
  if (!kind.adminOnly || isAdmin(caller)) return;
  throw new DomainError('forbidden', `user "${caller.name}/${caller.groups.join(',')}" cannot access the resource of type "${kind.name}"`, {
    title: 'Access Denied',
  });
}
