// `GET /events`: the change stream (docs/api.md, Change stream), Server-Sent Events of the
// resources and insights a caller may read, filtered by type, mesh and name.
import { DomainError, KINDS, meshInsightKind, serviceInsightKind, type AnyKind, type Violation } from '@mesh/model';
import { isAdmin } from '@mesh/resource-manager';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { callerOf } from '../access.js';
import type { ApiContext } from '../context.js';
import { withOperation } from '../handler.js';
import { component } from '../openapi/schemas.js';
import { queryValues } from '../query.js';
import type { RouteTable } from '../route-table.js';
import { ChangeEvent } from './event.js';
import type { ChangeHub, StreamStart } from './hub.js';
import { EventStream, type StreamFilter } from './stream.js';

interface EventQuery {
  kinds: readonly AnyKind[];
  meshes: ReadonlySet<string> | undefined;
  names: ReadonlySet<string> | undefined;
  start: StreamStart;
}

const REVISION = /^\d{1,15}$/;

/** The filters and the start of a stream, each kind checked against the caller's access. */
function parseEventQuery(req: Request): EventQuery {
  const violations: Violation[] = [];
  const caller = callerOf(req);
  const types = queryValues(req.query.type);
  let kinds: AnyKind[] = KINDS.filter((kind) => !kind.adminOnly || isAdmin(caller));
  if (types.length > 0) {
    kinds = KINDS.filter((kind) => types.includes(kind.name) || types.includes(kind.wireType));
    for (const type of types) if (!KINDS.some((kind) => kind.name === type || kind.wireType === type)) violations.push({ field: 'type', message: `unknown type "${type}"` });
  }
  const since = queryValues(req.query.since);
  const lastEventId = req.get('last-event-id');
  for (const value of since) if (!REVISION.test(value)) violations.push({ field: 'since', message: 'must be a revision: a non-negative integer' });
  if (lastEventId !== undefined && !REVISION.test(lastEventId)) violations.push({ field: 'Last-Event-ID', message: 'must be a revision: a non-negative integer' });
  const initial = queryValues(req.query.initial);
  for (const value of initial) if (value !== 'true' && value !== 'false') violations.push({ field: 'initial', message: 'must be true or false' });
  if (violations.length > 0) throw new DomainError('bad_request', 'Invalid query parameters', { title: 'Invalid query parameters', violations });
  const secret = kinds.find((kind) => kind.adminOnly && !isAdmin(caller));
  if (secret) {
    throw new DomainError('forbidden', `user "${caller.name}/${caller.groups.join(',')}" cannot access the resource of type "${secret.name}"`, { title: 'Access Denied' });
  }
  // What the client saw last: the header of a reconnecting EventSource wins over the URL it reuses.
  const resumeFrom = lastEventId ?? since.at(-1);
  const meshes = queryValues(req.query.mesh);
  const names = queryValues(req.query.name);
  return {
    kinds,
    meshes: meshes.length > 0 ? new Set(meshes) : undefined,
    names: names.length > 0 ? new Set(names) : undefined,
    start: { ...(resumeFrom !== undefined ? { since: Number(resumeFrom) } : {}), initial: initial.at(-1) === 'true' },
  };
}

const filterKeyOf = (query: EventQuery): string =>
  JSON.stringify([query.kinds.map((kind) => kind.name).sort(), [...(query.meshes ?? [])].sort(), [...(query.names ?? [])].sort(), query.meshes === undefined, query.names === undefined]);

function filterOf(query: EventQuery): StreamFilter {
  const kinds = new Set(query.kinds);
  const { meshes, names } = query;
  return (event) => kinds.has(event.kind) && (!meshes || (event.kind.scope === 'mesh' && meshes.has(event.mesh))) && (!names || names.has(event.name));
}

/**
 * The current state the query matches, as `put` events of `revision`. The reads are all begun
 * before this returns: the store and the aggregator answer from memory as it is at the call.
 */
function snapshotOf(ctx: ApiContext, query: EventQuery, filter: StreamFilter): (revision: number) => Promise<ChangeEvent[]> {
  return (revision) => {
    const reads = query.kinds.map((kind): Promise<ChangeEvent[]> => {
      if (kind === meshInsightKind) {
        const names = ctx.insights.meshNames();
        return Promise.resolve(names.map((name) => new ChangeEvent(revision, kind, '', name, ctx.insights.meshInsight(name))));
      }
      if (kind === serviceInsightKind) {
        const meshes = query.meshes ? [...query.meshes].sort() : [undefined];
        const services = meshes.flatMap((mesh) => ctx.insights.listServices(mesh, ''));
        return Promise.resolve(services.map((service) => new ChangeEvent(revision, kind, service.mesh, service.name, ctx.insights.serviceInsight(service.mesh, service.name))));
      }
      const meshes = kind.scope === 'mesh' && query.meshes ? [...query.meshes].sort() : [undefined];
      return Promise.all(meshes.map((mesh) => ctx.manager.reader.list({ type: kind.name, ...(mesh !== undefined ? { mesh } : {}), offset: 0, size: 0 }))).then((pages) =>
        pages.flatMap((page) => page.items.map((resource) => new ChangeEvent(revision, kind, resource.mesh, resource.name, resource))),
      );
    });
    return Promise.all(reads).then((events) => events.flat().filter(filter));
  };
}

async function watch(ctx: ApiContext, hub: ChangeHub, req: Request, res: Response): Promise<void> {
  const query = parseEventQuery(req);
  const filter = filterOf(query);
  const stream = new EventStream(res, filter, filterKeyOf(query), hub.maxBufferedBytes, hub);
  await hub.open(stream, query.start, snapshotOf(ctx, query, filter));
}

const EventSchema = component(
  'ChangeEvent',
  z
    .object({
      revision: z.number().int().meta({ description: 'The store revision of the change; for `initial` events, the one `synced` carries.' }),
      type: z.string().meta({ description: 'The kind (`Dataplane`, `MeshInsight`, ...).', example: 'Dataplane' }),
      mesh: z.string().optional().meta({ description: 'The mesh, for a mesh-scoped kind.' }),
      name: z.string(),
      resource: z.record(z.string(), z.unknown()).optional().meta({ description: 'What `GET` of the resource answered at this revision; absent on `delete`.' }),
    })
    .meta({
      description:
        'The `data:` of an `event: put` or `event: delete` (its `id:` is the revision). Besides these: `event: synced` ends the initial state, `event: resync` (data `{"revision": N}`) says the client must list again, and comment lines keep the stream open.',
    }),
);

const revision = z.string().regex(REVISION);

export function addEventRoutes(table: RouteTable, ctx: ApiContext, hub: ChangeHub): void {
  table.add({
    method: 'GET',
    path: '/events',
    doc: {
      summary: 'Stream changes of resources and insights',
      description:
        'Server-Sent Events (`EventSource` works as it is) of the resources and insights the caller may read, each change once and in revision order. A client that reconnects sends `Last-Event-ID` (or `since`) and receives every change after it; one from before what the control plane keeps first receives `resync`. A comment line comes every 15 s on an idle stream; a client that reads too slowly gets `resync` and the stream ends.',
      tag: 'Events',
      query: [
        { name: 'type', description: 'Only this kind (`Dataplane`, `MeshTimeout`, `DataplaneInsight`, `MeshInsight`, `ServiceInsight`, ...); repeat for several.', schema: z.string().meta({ example: 'Dataplane' }), repeated: true },
        { name: 'mesh', description: 'Only the resources of this mesh; repeat for several.', schema: z.string(), repeated: true },
        { name: 'name', description: 'Only the resources of this name; repeat for several.', schema: z.string(), repeated: true },
        { name: 'initial', description: '`true`: the current state first, as `put` events, then `event: synced` whose `id` is the revision the stream continues from.', schema: z.enum(['true', 'false']) },
        { name: 'since', description: 'Every change after this revision (what `Last-Event-ID` says, which wins when both are sent).', schema: revision },
      ],
      responses: { 200: { description: 'The stream, one event per change.', mediaType: 'text/event-stream', schema: EventSchema } },
      errors: [400, 403],
    },
    handler: withOperation('list', (req, res) => watch(ctx, hub, req, res)),
  });
}
