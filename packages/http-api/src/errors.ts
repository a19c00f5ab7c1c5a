// The standard error body (docs/api.md, Errors) and the one place domain errors become HTTP.
import { DomainError, WRITE_TITLES, type ErrorCode, type Violation } from '@mesh/model';
import type { Response } from 'express';

export interface ErrorBody {
  type: '/std-errors';
  status: number;
  title: string;
  detail: string;
  invalid_parameters?: Array<{ field: string; reason: string }>;
  details: string;
  causes?: Array<{ field: string; message: string }>;
}

export function errorBody(status: number, title: string, detail: string, violations: readonly Violation[] = []): ErrorBody {
  const body: ErrorBody = { type: '/std-errors', status, title, detail, details: detail };
  if (violations.length > 0) {
    // Key order as the reference: invalid_parameters before details, causes last.
    return {
      type: body.type,
      status,
      title,
      detail,
      invalid_parameters: violations.map((v) => ({ field: v.field, reason: v.message })),
      details: detail,
      causes: violations.map((v) => ({ field: v.field, message: v.message })),
    };
  }
  return body;
}

export function sendError(res: Response, status: number, title: string, detail: string, violations: readonly Violation[] = []): void {
  sendJson(res, status, JSON.stringify(errorBody(status, title, detail, violations)));
}

export function sendJson(res: Response, status: number, json: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(json);
}

/** What a request was doing; it names the title of most errors. */
export type Operation = 'get' | 'list' | 'process' | 'create' | 'update' | 'delete';

export const OPERATION_TITLES: Record<Operation, string> = {
  get: 'Could not retrieve a resource',
  list: 'Could not retrieve resources',
  process: 'Could not process a resource',
  create: WRITE_TITLES.create,
  update: WRITE_TITLES.update,
  delete: 'Could not delete a resource',
};

const STATUS_BY_CODE: Record<ErrorCode, number> = {
  bad_request: 400,
  invalid: 400,
  mesh_not_found: 400,
  not_found: 404,
  already_exists: 409,
  conflict: 409,
  forbidden: 403,
  unauthenticated: 401,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  not_acceptable: 406,
  payload_too_large: 413,
  unavailable: 503,
};

/** An error raised while serving `operation`, as its status and body. */
export function sendDomainError(res: Response, operation: Operation, error: DomainError): void {
  sendError(res, STATUS_BY_CODE[error.code], error.title ?? OPERATION_TITLES[operation], error.message, error.violations);
}

export { badRequest, methodNotAllowed } from '@mesh/model';
