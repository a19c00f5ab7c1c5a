import { DomainError } from '@mesh/model';
import express, { type Express, type Request, type Response } from 'express';
import { authenticate } from './access.js';
import { applyCors } from './cors.js';
import type { ApiContext } from './context.js';
import { addCrudRoutes } from './crud.js';
import { addViewRoutes } from './views/index.js';
import { sendDomainError, sendError } from './errors.js';
import { DEFAULT_API_LIMITS, limitConcurrentRequests } from './limits.js';
import { addApiDescriptionRoutes } from './openapi/routes.js';
import { mediaTypeOf } from './route-doc.js';
import { RouteTable, type Method, type Route, type RouteMatch } from './route-table.js';
import { forwardToZone } from './zone-forwarding.js';

export type { ApiContext, ControlPlaneInfo, Logger, RequestObserver } from './context.js';

const ROUTED_METHODS = new Set<string>(['GET', 'PUT', 'DELETE', 'POST']);

/** Whether `Accept` allows a media type (`text/css`; any type for a route that answers several). */
function allows(accept: string, mediaType: string): boolean {
  const [wantedType, wantedSubtype] = mediaType.split(';')[0]!.trim().toLowerCase().split('/');
  return accept.split(',').some((part) => {
    const [type, subtype] = part.split(';')[0]!.trim().toLowerCase().split('/');
    if (wantedType === '*' || type === '*') return true;
    return type === wantedType && (subtype === '*' || subtype === wantedSubtype);
  });
}

/** Accept must allow JSON (errors are JSON) or what the route answers; absent is fine. */
function acceptable(req: Request, route: Route): boolean {
  const accept = req.get('accept');
  if (!accept) return true;
  return allows(accept, 'application/json') || allows(accept, mediaTypeOf(route.doc));
}

/** Every route of the API, its own description (`/openapi.json`, `/docs`) last. */
export function createRouteTable(ctx: ApiContext, extendRoutes?: (table: RouteTable) => void): RouteTable {
  const table = new RouteTable();
  addCrudRoutes(table, ctx);
  addViewRoutes(table, ctx);
  extendRoutes?.(table);
  addApiDescriptionRoutes(table, ctx);
  return table;
}

/** Builds the REST API as an Express app from its dependencies. */
export function createApiApp(ctx: ApiContext, extendRoutes?: (table: RouteTable) => void): Express {
  const table = createRouteTable(ctx, extendRoutes);
  const admit = limitConcurrentRequests(ctx.limits?.maxConcurrentRequests ?? DEFAULT_API_LIMITS.maxConcurrentRequests);
  const { requestLogger, observeRequest } = ctx;

  /** Establishes the caller, then answers from the zone that owns the proxy (on a global) or from the route's handler. */
  const serve = async (req: Request, res: Response, match: RouteMatch, route: Route): Promise<void> => {
    try {
      // Only a bearer token takes a promise to check; the other callers are known at once.
      const verifying = authenticate(req, ctx.access);
      if (verifying) await verifying;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      sendDomainError(res, 'get', error);
      return;
    }
    if (ctx.zoneAdmin && (await forwardToZone(ctx, match, req, res))) return;
    await route.handler(req, res, match.params);
  };

  const app = express();
  app.disable('x-powered-by');
  // ETags hash every body: on a 40 KB list page that costs more than half the throughput.
  app.set('etag', false);
  app.set('query parser', 'simple');
  // One middleware for the whole request path (log, limit, metrics, routing): every router layer a
  // request passes through costs Express a path match and a chain of calls.
  app.use((req: Request, res: Response, next: (error?: unknown) => void) => {
    requestLogger?.(req, res);
    if (!admit(res)) return;
    const match = table.match(req.path);
    if (observeRequest) {
      const started = process.hrtime.bigint();
      // Unknown paths are one route, so scanners cannot grow the metrics without bound.
      const route = match?.template ?? 'unknown';
      res.on('finish', () => observeRequest({ route, method: req.method, status: res.statusCode, seconds: Number(process.hrtime.bigint() - started) / 1e9 }));
    }
    if (applyCors(req, res, ctx.corsAllowedDomains, match?.allow)) return;
    if (!match) {
      sendError(res, 404, 'Not Found', 'Page Not Found');
      return;
    }
    const route = ROUTED_METHODS.has(req.method) ? match.routes.get(req.method as Method) : undefined;
    if (!route) {
      res.setHeader('Allow', match.allow);
      sendError(res, 405, 'Method not Allowed', 'Method not allowed');
      return;
    }
    if (!acceptable(req, route)) {
      sendError(res, 406, 'Not Acceptable', `Not Acceptable. Available representations: ${[...new Set(['application/json', mediaTypeOf(route.doc)])].join(', ')}`);
      return;
    }
    serve(req, res, match, route).catch(next);
  });

  app.use((error: unknown, _req: Request, res: Response, _next: (error?: unknown) => void) => {
    ctx.logger.error({ err: error }, 'request failed');
    if (!res.headersSent) sendError(res, 500, 'Internal Server Error', 'Internal Server Error');
    else res.end();
  });
  return app;
}
