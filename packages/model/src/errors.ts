import type { Violation } from './validation/violations.js';

/**
 * What went wrong, in domain terms. The REST layer maps each code to a status and the standard
 * error body in one place; the zone sync maps it to its own errors.
 */
export type ErrorCode =
  | 'bad_request'
  | 'invalid'
  | 'mesh_not_found'
  | 'not_found'
  | 'already_exists'
  | 'conflict'
  | 'forbidden'
  | 'unauthenticated'
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'not_acceptable'
  | 'payload_too_large'
  | 'unavailable';

export interface DomainErrorOptions {
  /** Overrides the title the REST layer derives from the operation. */
  title?: string;
  violations?: Violation[];
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly title: string | undefined;
  readonly violations: Violation[];

  constructor(code: ErrorCode, detail: string, options: DomainErrorOptions = {}) {
    super(detail);
    this.name = 'DomainError';
    this.code = code;
    this.title = options.title;
    this.violations = options.violations ?? [];
  }
}

/** The resource is not valid: one or more violated rules. */
export const invalidResource = (violations: Violation[], title?: string): DomainError =>
  new DomainError('invalid', 'Resource is not valid', { violations, ...(title ? { title } : {}) });

const describeKey = (type: string, name: string, mesh: string) => `type="${type}" name="${name}" mesh="${mesh}"`;

/** The one error for a resource that does not exist. */
export const resourceNotFound = (title?: string): DomainError => new DomainError('not_found', 'Not found', title ? { title } : {});
export const resourceAlreadyExists = (type: string, name: string, mesh: string): DomainError =>
  new DomainError('already_exists', `resource already exists: ${describeKey(type, name, mesh)}`, { title: 'Conflict' });
export const resourceConflict = (type: string, name: string, mesh: string): DomainError =>
  new DomainError('conflict', `resource conflict: ${describeKey(type, name, mesh)}`, { title: 'Conflict' });

/** The store cannot be reached: the request may succeed later (503). */
export const storeUnavailable = (): DomainError =>
  new DomainError('unavailable', 'The store is unavailable; try again later', { title: 'Service Unavailable' });

/** A body that cannot be read as a resource of its kind. */
export const badRequest = (detail: string): DomainError => new DomainError('bad_request', detail, { title: 'Bad Request' });

/** The kind is not written here (mode, read-only API, runtime state). */
export const methodNotAllowed = (): DomainError => new DomainError('method_not_allowed', 'Method not allowed', { title: 'Method not Allowed' });

/** Titles of errors raised while a resource is being created or updated. */
export const WRITE_TITLES = {
  create: 'Could not create a resource',
  update: 'Could not update a resource',
} as const;
