// The API servers' own settings (docs/api.md, Limits), from `apiServer.*`: how long a slow client
// may take, and the limits the REST API enforces.
import type { ServerOptions } from 'node:http';
import type { ApiLimits } from '@mesh/http-api';
import { parseDurationNanos } from '@mesh/model';
import type { ControlPlaneConfig } from './config.js';

const millis = (duration: string) => Math.round((parseDurationNanos(duration) ?? 0) / 1e6);

/**
 * Node's timeouts of a request (0 turns one off): `readHeaderTimeout` for the request line and
 * headers, `readTimeout` for the whole request, body included. Node looks for late requests every
 * 30 s unless told; every second (or twice per timeout, when shorter) bounds how late a cut comes.
 */
export function apiServerOptions(config: ControlPlaneConfig): ServerOptions {
  const headersTimeout = millis(config.apiServer.readHeaderTimeout);
  const requestTimeout = millis(config.apiServer.readTimeout);
  const shortest = Math.min(1000, ...[headersTimeout, requestTimeout].filter((timeout) => timeout > 0).map((timeout) => timeout / 2));
  return { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.max(50, Math.round(shortest)) };
}

export function apiLimits(config: ControlPlaneConfig): ApiLimits {
  return { maxRequestBodySize: config.apiServer.maxRequestBodySize, maxConcurrentRequests: config.apiServer.maxConcurrentRequests };
}
