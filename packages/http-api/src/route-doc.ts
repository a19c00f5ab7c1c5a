// What each route of the table says about itself. The OpenAPI document (src/openapi/document.ts)
// is built from these, so it lists exactly the routes the server answers (docs/api.md, OpenAPI).
import type { Mode } from '@mesh/model';
import { z } from 'zod';

export interface QueryParameter {
  name: string;
  description: string;
  schema: z.ZodType;
  /** May be given several times (`tag=a:1&tag=b:2`). */
  repeated?: boolean;
}

export interface ResponseDoc {
  description: string;
  /** `application/json` unless told. */
  mediaType?: string;
  schema: z.ZodType;
}

/** A request that succeeds on a control plane holding the other documented examples. */
export interface RouteExample {
  /** The values of the path's `{captures}`. */
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /**
   * What else the example needs to succeed, beyond the other examples (`a running proxy`): the
   * document says so, and the OpenAPI test, which has no such thing, expects the route's 503.
   */
  needs?: string;
}

/** Statuses answered with the standard error body (docs/api.md, Errors). */
export type ErrorStatus = 400 | 403 | 404 | 405 | 409 | 413 | 415 | 503;

export interface RouteDoc {
  /** One line, shown in the list of operations. */
  summary: string;
  description?: string;
  /** The group of the operation on the reference page (a kind's display name, `Insights`, ...). */
  tag: string;
  query?: readonly QueryParameter[];
  /** A JSON request body. */
  body?: z.ZodType;
  /** The answers that mean success, by status; none for a route that always refuses. */
  responses: Readonly<Partial<Record<200 | 201, ResponseDoc>>>;
  /** Error statuses of this route beside those any route may answer (401, 406, 408, 431, 500, 503). */
  errors: readonly ErrorStatus[];
  example?: RouteExample;
  /** The modes whose control plane serves it; every mode when absent. */
  modes?: readonly Mode[];
}

/** The media type of a route's successful answers, which its `Accept` header must allow. */
export const mediaTypeOf = (doc: RouteDoc): string => (doc.responses[200] ?? doc.responses[201])?.mediaType ?? 'application/json';

const nonNegativeInteger = z.string().regex(/^\d+$/);

/** `size` and `offset` (docs/api.md, Lists). */
export const PAGE_PARAMETERS: readonly QueryParameter[] = [
  { name: 'size', description: 'Items per page: 100 unless told, at most 1000.', schema: nonNegativeInteger },
  {
    name: 'offset',
    description: 'Where the page starts: an index, or the cursor the `next` URL of the page before carries (it resumes after that page\'s last item, so writes between pages neither skip nor repeat an item).',
    schema: z.union([nonNegativeInteger, z.string().regex(/^~[A-Za-z0-9_-]+$/)]),
  },
];

export const NAME_FILTER: QueryParameter = { name: 'name', description: 'Only the items whose name contains this text.', schema: z.string() };
