// Inspection of a zone's proxies on the global: the owning zone answers over its sync session
// (docs/multizone.md, Inspecting a zone's proxies). The zone serves the request as its own API
// would, for the control plane itself, through a socket only this control plane uses.
import { chmodSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dataplaneKind, DomainError, ZONE_LABEL, zoneEgressKind, zoneIngressKind, type AnyKind } from '@mesh/model';
import type { Request, Response } from 'express';
import { callerOf, requireRule, type StaticRuleName } from './access.js';
import type { ApiContext } from './context.js';
import { sendError } from './errors.js';
import { markInternalRequest } from './internal-requests.js';
import type { Params, RouteMatch } from './route-table.js';

/** A reply of the owning zone, passed on as it is. */
export interface ZoneReply {
  status: number;
  contentType: string;
  body: string;
}

/** Reaches the zones connected to this global. */
export interface ZoneAdmin {
  /** Sends a request of the zone's API to the zone; undefined when the zone is not connected here. */
  forward(zone: string, path: string): Promise<ZoneReply> | undefined;
}

interface Forwardable {
  kind: AnyKind;
  /** What the reference calls the operation, in the error when the zone is away. */
  operation: string;
  rule?: StaticRuleName;
}

const DATAPLANE = '/meshes/{mesh}/dataplanes/{name}';

const OPERATIONS = {
  xds: { operation: 'XDS Config Dump', rule: 'viewConfigDump' },
  stats: { operation: 'Stats', rule: 'viewStats' },
  clusters: { operation: 'Clusters', rule: 'viewClusters' },
} as const;

/** The routes of a zone proxy that its zone answers. */
const FORWARDED: ReadonlyMap<string, Forwardable> = new Map([
  ...(['xds', 'stats', 'clusters'] as const).flatMap((view): Array<[string, Forwardable]> => [
    [`${DATAPLANE}/${view}`, { kind: dataplaneKind, ...OPERATIONS[view] }],
    [`/zoneingresses/{name}/${view}`, { kind: zoneIngressKind, ...OPERATIONS[view] }],
    [`/zoneegresses/{name}/${view}`, { kind: zoneEgressKind, ...OPERATIONS[view] }],
  ]),
  [`${DATAPLANE}/policies`, { kind: dataplaneKind, operation: 'Policies' }],
  [`${DATAPLANE}/rules`, { kind: dataplaneKind, operation: 'Rules' }],
]);

const FORWARDED_PATHS = [...FORWARDED.keys()].map((template) => new RegExp(`^${template.replace(/\{(mesh|name)\}/g, '[^/?#]+')}(\\?.*)?$`));

/** Whether a zone serves this path for its global: the forwarded routes alone, nothing else of its API. */
export const isForwardedPath = (path: string): boolean => FORWARDED_PATHS.some((pattern) => pattern.test(path));

/** What a zone's reply may be served as from the global's origin: JSON, or plain text. */
const servedType = (contentType: string): string => (/^application\/json\b/i.test(contentType) ? 'application/json' : 'text/plain');

/** The zone that owns the proxy a route names, with the proxy's name there; undefined for a local one. */
async function owningZone(ctx: ApiContext, forwardable: Forwardable, params: Params): Promise<{ zone: string; name: string } | undefined> {
  const stored = await ctx.manager.get(forwardable.kind, params.mesh ?? '', params.name!);
  const zone = stored?.labels[ZONE_LABEL];
  if (!stored || !zone || !stored.name.startsWith(`${zone}.`)) return undefined;
  return { zone, name: stored.name.slice(zone.length + 1) };
}

/**
 * Answers the request from the owning zone when it names a zone's proxy on a global; false when
 * the request is for this control plane's own handlers.
 */
export async function forwardToZone(ctx: ApiContext, match: RouteMatch, req: Request, res: Response): Promise<boolean> {
  const forwardable = ctx.zoneAdmin && req.method === 'GET' ? FORWARDED.get(match.template) : undefined;
  if (!forwardable || !ctx.zoneAdmin) return false;
  const owner = await owningZone(ctx, forwardable, match.params);
  if (!owner) return false;
  if (forwardable.rule) requireRule(callerOf(req), ctx.access, forwardable.rule);
  const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
  const path = match.template
    .replace('{mesh}', encodeURIComponent(match.params.mesh ?? ''))
    .replace('{name}', encodeURIComponent(owner.name));
  const reply = ctx.zoneAdmin.forward(owner.zone, `${path}${query}`);
  if (!reply) {
    sendError(res, 400, 'Bad Request', `stream to execute ${forwardable.operation} operations is not yet connected`);
    return true;
  }
  try {
    const { status, contentType, body } = await reply;
    res.status(status).type(servedType(contentType)).send(body);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    sendError(res, 503, error.title ?? 'Service Unavailable', error.message);
  }
  return true;
}

/**
 * The API served to this control plane alone, on a Unix socket only its user can open: a zone
 * answers what its global forwards through it, as the control plane itself.
 */
export class InternalApi {
  private constructor(
    private readonly server: Server,
    private readonly socketPath: string,
  ) {}

  static async listen(app: (req: IncomingMessage, res: ServerResponse) => void, socketPath: string): Promise<InternalApi> {
    const server = createServer((req, res) => {
      markInternalRequest(req);
      app(req, res);
    });
    rmSync(socketPath, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
    chmodSync(socketPath, 0o600);
    return new InternalApi(server, socketPath);
  }

  /** GETs a path of the API. */
  get(path: string): Promise<ZoneReply> {
    return new Promise((resolve, reject) => {
      const req = request({ socketPath: this.socketPath, path, method: 'GET' }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 500, contentType: res.headers['content-type'] ?? 'application/json', body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.socketPath, { force: true });
  }
}
