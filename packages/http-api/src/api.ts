import { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError } from '@mesh/model';
import express, { type Express, type Request, type Response } from 'express';
import { authenticate, knownCaller, trustedPageOrigins } from './access.js';
import { AnswerCache } from './answer-cache.js';
import { applyCors } from './cors.js';
import type { ApiContext } from './context.js';
import { addCrudRoutes } from './crud.js';
import { ChangeHub } from './events/hub.js';
import { addEventRoutes } from './events/routes.js';
import { addViewRoutes } from './views/index.js';
import { sendDomainError, sendError } from './errors.js';
import { createGuiServer, hidesRoute } from './gui.js';
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
export function createRouteTable(ctx: ApiContext, extendRoutes?: (table: RouteTable) => void, changes = new ChangeHub(ctx.manager.reader, ctx.insights, ctx.changeStream)): RouteTable {
  const table = new RouteTable();
  addCrudRoutes(table, ctx);
  addViewRoutes(table, ctx);
  addEventRoutes(table, ctx, changes);
  extendRoutes?.(table);
  addApiDescriptionRoutes(table, ctx);
  return table;
}

/** What http(s).createServer takes to have its requests and responses born with the API's methods. */
export interface ApiServerOptions {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

/** The REST API as a request listener, and the server options it answers fastest under. */
export interface ApiApp {
  (req: IncomingMessage, res: ServerResponse): void;
  readonly serverOptions: ApiServerOptions;
  /** Ends the streams of changes, which never end by themselves, so that servers can close, and stops following writes. */
  close(): void;
}

/**
 * Request and response classes carrying Express's request and response methods, bound to `app`
 * (its settings: query parser, JSON formatting). Express itself swaps the prototype of every request
 * and response it handles, which halves what Node's HTTP server can serve (docs/architecture.md,
 * "Request path"); a server made with these classes creates them with the methods already there.
 */
function expressClasses(app: Express): ApiServerOptions {
  class ApiRequest extends IncomingMessage {}
  class ApiResponse<R extends IncomingMessage = IncomingMessage> extends ServerResponse<R> {}
  for (const [target, methods] of [
    [ApiRequest.prototype, express.request],
    [ApiResponse.prototype, express.response],
  ] as const) {
    for (const key of Reflect.ownKeys(methods)) Object.defineProperty(target, key, Object.getOwnPropertyDescriptor(methods, key)!);
    Object.defineProperty(target, 'app', { value: app, configurable: true, enumerable: true, writable: true });
  }
  return { IncomingMessage: ApiRequest, ServerResponse: ApiResponse };
}

/** Builds the REST API from its dependencies: Express's request and response, our route table. */
export function createApiApp(ctx: ApiContext, extendRoutes?: (table: RouteTable) => void): ApiApp {
  const changes = new ChangeHub(ctx.manager.reader, ctx.insights, ctx.changeStream);
  const table = createRouteTable(ctx, extendRoutes, changes);
  const admit = limitConcurrentRequests(ctx.limits?.maxConcurrentRequests ?? DEFAULT_API_LIMITS.maxConcurrentRequests);
  const { requestLogger, observeRequest } = ctx;
  const pageOrigins = trustedPageOrigins(ctx.corsAllowedDomains);
  const gui = ctx.gui ? createGuiServer(ctx.gui, { product: ctx.info.product, version: ctx.info.version, mode: ctx.mode }) : undefined;
  // The GUI would shadow the API's routes below its base path.
  const shadowed = ctx.gui && table.routes().find((route) => hidesRoute(ctx.gui!.basePath, route.path));
  if (shadowed) throw new Error(`apiServer.gui.basePath: ${ctx.gui!.basePath} would hide the API's ${shadowed.path}; choose another path, such as /gui`);

  /** Establishes the caller, then answers from the zone that owns the proxy (on a global) or from the route's handler. */
  const serve = async (req: Request, res: Response, match: RouteMatch, route: Route): Promise<void> => {
    try {
      // Only a bearer token takes a promise to check; the other callers are known at once.
      const verifying = authenticate(req, ctx.access, pageOrigins);
      if (verifying) await verifying;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      sendDomainError(res, 'get', error);
      return;
    }
    if (ctx.zoneAdmin && (await forwardToZone(ctx, match, req, res))) return;
    if (route.answerChangesWith && req.method === 'GET') answers.record(req, res, route.answerChangesWith, match);
    await route.handler(req, res, match.params);
  };

  const answers = new AnswerCache(ctx.manager.reader);
  const app = express();
  // ETags hash every body: on a 40 KB list page that costs more than half the throughput.
  app.set('etag', false);
  app.set('query parser', 'simple');
  const serverOptions = expressClasses(app);
  const { IncomingMessage: ApiRequest, ServerResponse: ApiResponse } = serverOptions;

  const failed = (error: unknown, res: Response): void => {
    ctx.logger.error({ err: error }, 'request failed');
    if (!res.headersSent) sendError(res, 500, 'Internal Server Error', 'Internal Server Error');
    else res.end();
  };

  /** The whole request path in one function: log, limit, metrics, CORS, routing. */
  const answer = (req: Request, res: Response): void => {
    const logged = requestLogger?.(req, res);
    // A kept answer's URL is an API route's, matched when the answer was made.
    const kept = req.method === 'GET' ? answers.find(req) : undefined;
    // The GUI's files and pages are no API route: no CORS, no caller, no route metrics.
    if (!kept && gui?.owns(req.path)) {
      if (logged) res.once('close', logged);
      gui.serve(req, res);
      return;
    }
    const match = kept?.match ?? table.match(req.path);
    // One listener for the log and the metrics: each listener of a response is a cost of every kept answer.
    if (observeRequest || logged) {
      const started = observeRequest ? process.hrtime.bigint() : 0n;
      res.once('close', () => {
        // Unknown paths are one route, so scanners cannot grow the metrics without bound.
        if (observeRequest && res.writableFinished) observeRequest({ route: match?.template ?? 'unknown', method: req.method, status: res.statusCode, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
        logged?.();
      });
    }
    // A stream of changes stays open while it waits for changes: it holds no slot of the requests in flight.
    const streamRoute = req.method === 'GET' ? match?.routes.get('GET') : undefined;
    if (!(streamRoute && mediaTypeOf(streamRoute.doc) === 'text/event-stream') && !admit(res)) return;
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
    // A kept answer is the same for every caller known without a token check (a token is checked,
    // and refused with a 401 when it does not verify, on the way to the handler).
    if (kept && knownCaller(req, ctx.access, pageOrigins)) {
      answers.send(res, kept);
      return;
    }
    serve(req, res, match, route).catch((error: unknown) => failed(error, res));
  };

  const listener = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    // A server made without the API's classes (an internal socket, a test's) still gets their methods.
    if (!(incoming instanceof ApiRequest)) Object.setPrototypeOf(incoming, ApiRequest.prototype);
    if (!(outgoing instanceof ApiResponse)) Object.setPrototypeOf(outgoing, ApiResponse.prototype);
    const req = incoming as Request;
    const res = outgoing as Response;
    // What Express's router would set before the first handler.
    req.res = res;
    res.req = req;
    req.originalUrl = req.url;
    req.baseUrl = '';
    try {
      answer(req, res);
    } catch (error) {
      failed(error, res);
    }
  };
  return Object.assign(listener, {
    serverOptions,
    close: () => {
      changes.close();
      answers.close();
    },
  });
}
