// The typed API client: paths, parameters and bodies come from the OpenAPI document the control
// plane serves (src/api/schema.d.ts, generated at build time), so a request that does not match
// the API does not compile.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema.js';
import { token } from './session.js';

export type Schemas = components['schemas'];

/** The standard error body of the API (docs/api.md, Errors). */
export type ApiErrorBody = Schemas['Error'];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody | undefined,
  ) {
    super(body?.detail ?? `the API answered ${status}`);
  }
}

const bearer: Middleware = {
  onRequest({ request }) {
    if (token.value) request.headers.set('Authorization', `Bearer ${token.value}`);
    return request;
  },
};

export type ApiClient = ReturnType<typeof createClient<paths>>;

export function createApiClient(baseUrl: string, fetchImpl: typeof fetch = (...args) => globalThis.fetch(...args)): ApiClient {
  const client = createClient<paths>({ baseUrl, fetch: fetchImpl });
  client.use(bearer);
  return client;
}

/** A resource as `GET` answers it unless asked for `?format=k8s`, which the document describes too. */
export function flatForm<T extends object>(resource: T): Exclude<T, { apiVersion: string }> {
  if ('apiVersion' in resource) throw new Error('the API answered a resource in its Kubernetes form');
  return resource as Exclude<T, { apiVersion: string }>;
}

/** The data of an answer, or an ApiError with the API's error body. */
export function dataOf<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || result.data === undefined) throw new ApiError(result.response.status, result.error as ApiErrorBody | undefined);
  return result.data;
}
