// Requests to the control plane's REST API (undici), errors shown as the reference's CLI shows
// them: title, detail, then each field cause on its own line.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { type ControlPlaneEntry, UserError } from './config.js';
import type { ApiResource } from './output.js';

export interface ApiReply {
  status: number;
  text: string;
  /** The parsed body; undefined when it is empty or not JSON. */
  json: unknown;
}

/** A list as the API pages it. */
export interface ListPage<Item> {
  items: Item[];
  total: number;
  next?: string | null;
}

interface ErrorBody {
  title?: string;
  detail?: string;
  causes?: Array<{ field: string; message: string }>;
}

/** The lines of an API error: `Error: <title> (<detail>)` and `* <field>: <message>` per cause. */
export function describeApiError(reply: ApiReply): string {
  const body = reply.json as ErrorBody | undefined;
  if (!body?.title) return `Error: the control plane answered ${reply.status}: ${reply.text.trim()}`;
  const lines = [`Error: ${body.title}${body.detail && body.detail !== body.title ? ` (${body.detail})` : ''}`];
  for (const cause of body.causes ?? []) lines.push(`* ${cause.field}: ${cause.message}`);
  return lines.join('\n');
}

export class ApiClient {
  private readonly baseUrl: string;
  private readonly dispatcher: Agent;
  private readonly token: string | undefined;

  constructor(controlPlane: ControlPlaneEntry) {
    const server = controlPlane.coordinates.apiServer;
    this.baseUrl = server.url.replace(/\/+$/, '');
    this.token = server.authType === 'tokens' ? server.authConf?.token : undefined;
    this.dispatcher = new Agent({
      connect: {
        rejectUnauthorized: !server.skipVerify,
        ...(server.caCertFile ? { ca: readFileSync(server.caCertFile, 'utf8') } : {}),
      },
    });
  }

  async call(method: string, path: string, body?: unknown): Promise<ApiReply> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let response;
    try {
      response = await request(`${this.baseUrl}${path}`, {
        method: method as 'GET',
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        dispatcher: this.dispatcher,
      });
    } catch (error) {
      const reason = (error as { code?: string }).code ?? (error as Error).message;
      throw new UserError(`Error: could not reach the control plane at ${this.baseUrl} (${reason})`);
    }
    const text = await response.body.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.statusCode, text, json };
  }

  /** A successful answer, or the API's error as a user error. */
  async ok(method: string, path: string, body?: unknown): Promise<ApiReply> {
    const reply = await this.call(method, path, body);
    if (reply.status >= 400) throw new UserError(describeApiError(reply));
    return reply;
  }

  /** Every item of a list, following `next` (one page when `page` is given). */
  async list<Item>(path: string, page?: { size?: number; offset?: number }): Promise<ListPage<Item>> {
    const query = new URLSearchParams();
    if (page?.size !== undefined) query.set('size', String(page.size));
    if (page?.offset !== undefined) query.set('offset', String(page.offset));
    const separator = path.includes('?') ? '&' : '?';
    const first = (await this.ok('GET', query.size > 0 ? `${path}${separator}${query.toString()}` : path)).json as ListPage<Item>;
    if (page) return first;
    const items = [...first.items];
    let next: string | null | undefined = first.next;
    while (next) {
      const url = new URL(next, this.baseUrl);
      const more = (await this.ok('GET', `${url.pathname}${url.search}`)).json as ListPage<Item>;
      items.push(...more.items);
      next = more.next;
    }
    return { items, total: first.total };
  }

  /**
   * The events of the change stream at `path` (`/events?...`), as they come. A dropped connection
   * is opened again with the last event's revision, so no change is missed or repeated.
   */
  async *watch(path: string): AsyncGenerator<StreamEvent> {
    let lastId: string | undefined;
    for (;;) {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (this.token) headers.authorization = `Bearer ${this.token}`;
      if (lastId !== undefined) headers['last-event-id'] = lastId;
      let response;
      try {
        response = await request(`${this.baseUrl}${path}`, { method: 'GET', headers, dispatcher: this.dispatcher, bodyTimeout: 0 });
      } catch (error) {
        throw new UserError(`Error: could not reach the control plane at ${this.baseUrl} (${(error as { code?: string }).code ?? (error as Error).message})`);
      }
      if (response.statusCode >= 400) {
        const text = await response.body.text();
        throw new UserError(describeApiError({ status: response.statusCode, text, json: parseJson(text) }));
      }
      let buffer = '';
      try {
        for await (const chunk of response.body) {
          buffer += (chunk as Buffer).toString('utf8');
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const event = parseEvent(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
            if (!event) continue;
            if (event.id !== undefined) lastId = event.id;
            yield event;
          }
        }
      } catch {
        // The connection dropped: opened again below, from the last revision seen.
      }
    }
  }
}

/** One event of the change stream: `put`, `delete`, `synced` or `resync`, with its data. */
export interface StreamEvent {
  event: string;
  id?: string;
  data: StreamEventData;
}

/** The `data:` of a `put` or `delete` (`resource` on a `put`), or of `synced` and `resync` (`revision` alone). */
export interface StreamEventData {
  revision: number;
  type?: string;
  mesh?: string;
  name?: string;
  resource?: ApiResource;
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** An event's lines; undefined for a comment. */
function parseEvent(block: string): StreamEvent | undefined {
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
  }
  if (fields.event === undefined) return undefined;
  return { event: fields.event, ...(fields.id !== undefined ? { id: fields.id } : {}), data: parseJson(fields.data ?? '') as StreamEventData };
}
