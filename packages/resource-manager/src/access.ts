// Who writes, and what each caller may touch (docs/tokens.md): secrets are for admins only.
import { DomainError, type AnyKind } from '@mesh/model';

export interface Caller {
  name: string;
  groups: string[];
}

export const ADMIN: Caller = { name: 'mesh-system:admin', groups: ['mesh-system:admin', 'mesh-system:authenticated'] };
export const ANONYMOUS: Caller = { name: 'mesh-system:anonymous', groups: ['mesh-system:unauthenticated'] };

export const isAdmin = (caller: Caller): boolean => caller.name === ADMIN.name || caller.groups.includes(ADMIN.name);

/** Refuses non-admins on admin-only kinds (403). */
export function requireAccess(caller: Caller, kind: AnyKind): void {
  if (!kind.adminOnly || isAdmin(caller)) return;
  throw new DomainError('forbidden', `user "${caller.name}/${caller.groups.join(',')}" cannot access the resource of type "${kind.name}"`, {
    title: 'Access Denied',
  });
}
