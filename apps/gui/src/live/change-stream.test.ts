import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangeStream, type ChangeEvent } from './change-stream.js';

/** A fake of the API's `/events`: each request gets a stream the test writes to and ends. */
class EventsEndpoint {
  readonly requests: Array<{ url: string; headers: Record<string, string> }> = [];
  private readonly streams: Array<ReadableStreamDefaultController<Uint8Array>> = [];
  failing = false;

  readonly fetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    this.requests.push({ url: input instanceof Request ? input.url : input.toString(), headers: { ...(init?.headers as Record<string, string>) } });
    if (this.failing) return Promise.reject(new TypeError('Failed to fetch'));
    const body = new ReadableStream<Uint8Array>({ start: (controller) => void this.streams.push(controller) });
    init?.signal?.addEventListener('abort', () => void body.cancel().catch(() => undefined));
    return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }));
  };

  send(text: string): void {
    this.streams.at(-1)!.enqueue(new TextEncoder().encode(text));
  }

  end(): void {
    this.streams.at(-1)!.close();
  }
}

const put = (revision: number, type: string, name: string, id = true) =>
  `${id ? `id: ${revision}\n` : ''}event: put\ndata: ${JSON.stringify({ revision, type, mesh: 'default', name, resource: {} })}\n\n`;

let stream: ChangeStream | undefined;
afterEach(() => stream?.stop());

function start(endpoint: EventsEndpoint) {
  stream = new ChangeStream({ apiUrl: 'http://cp.test', headers: () => ({ Authorization: 'Bearer t' }), fetch: endpoint.fetch, retryDelayMs: () => 0 });
  const dataplanes = { types: ['Dataplane', 'DataplaneInsight'], changes: [] as ChangeEvent[], resyncs: 0 };
  const meshes = { types: ['Mesh'], changes: [] as ChangeEvent[], resyncs: 0 };
  for (const watcher of [dataplanes, meshes]) {
    stream.watch({ types: watcher.types, onChange: (event) => watcher.changes.push(event), onResync: () => (watcher.resyncs += 1) });
  }
  stream.start();
  return { stream, dataplanes, meshes };
}

describe('the change stream of a page', () => {
  it('asks for the kinds watched, with the credentials, and reloads everything once connected', async () => {
    const endpoint = new EventsEndpoint();
    const { stream: changes, dataplanes, meshes } = start(endpoint);
    expect(changes.state.value).toBe('connecting');
    await vi.waitFor(() => expect(changes.state.value).toBe('live'));
    expect(endpoint.requests).toEqual([{ url: 'http://cp.test/events?type=Dataplane&type=DataplaneInsight&type=Mesh', headers: { Accept: 'text/event-stream', Authorization: 'Bearer t' } }]);
    expect([dataplanes.resyncs, meshes.resyncs]).toEqual([1, 1]);
  });

  it('hands each change to the watchers of its kind', async () => {
    const endpoint = new EventsEndpoint();
    const { stream: changes, dataplanes, meshes } = start(endpoint);
    await vi.waitFor(() => expect(changes.state.value).toBe('live'));
    endpoint.send(put(7, 'Dataplane', 'web-1') + put(8, 'Mesh', 'payments').replace('event: put', 'event: delete'));
    await vi.waitFor(() => expect(meshes.changes).toHaveLength(1));
    expect(dataplanes.changes.map((event) => [event.kind, event.type, event.name])).toEqual([['put', 'Dataplane', 'web-1']]);
    expect(meshes.changes.map((event) => [event.kind, event.type, event.name])).toEqual([['delete', 'Mesh', 'payments']]);
  });

  it('resumes after a break from the last revision received, without reloading, and reloads on resync', async () => {
    const endpoint = new EventsEndpoint();
    const { stream: changes, dataplanes } = start(endpoint);
    await vi.waitFor(() => expect(changes.state.value).toBe('live'));
    endpoint.send(put(41, 'DataplaneInsight', 'web-1', false) + put(41, 'Dataplane', 'web-1'));
    await vi.waitFor(() => expect(dataplanes.changes).toHaveLength(2));
    endpoint.end();
    await vi.waitFor(() => expect(endpoint.requests).toHaveLength(2));
    expect(endpoint.requests[1]!.headers['Last-Event-ID']).toBe('41');
    await vi.waitFor(() => expect(changes.state.value).toBe('live'));
    expect(dataplanes.resyncs).toBe(1);
    endpoint.send('event: resync\ndata: {"revision":90}\n\n');
    await vi.waitFor(() => expect(dataplanes.resyncs).toBe(2));
  });

  it('says reconnecting, then offline after three failures in a row, and live again once it connects', async () => {
    const endpoint = new EventsEndpoint();
    const { stream: changes } = start(endpoint);
    await vi.waitFor(() => expect(changes.state.value).toBe('live'));
    endpoint.failing = true;
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const states = new Set<string>();
    const stop = setInterval(() => states.add(changes.state.value), 0);
    endpoint.end();
    await vi.waitFor(() => expect(changes.state.value).toBe('offline'));
    clearInterval(stop);
    expect(states.has('reconnecting')).toBe(true);
    endpoint.failing = false;
    await vi.waitFor(() => expect(changes.state.value).toBe('live'));
  });

  it('asks for one mesh while every watcher names the same one, and follows a watcher to another mesh', async () => {
    const endpoint = new EventsEndpoint();
    const changes = new ChangeStream({ apiUrl: '', headers: () => ({}), fetch: endpoint.fetch, retryDelayMs: () => 0 });
    stream = changes;
    changes.start();
    let shown = 'default';
    const ignore = { onChange: () => undefined, onResync: () => undefined };
    changes.watch({ types: [], ...ignore });
    changes.watch({ types: ['Dataplane', 'DataplaneInsight'], mesh: () => shown, ...ignore });
    const stopPolicies = changes.watch({ types: ['MeshTimeout'], mesh: () => 'default', ...ignore });
    const urls = () => endpoint.requests.map((request) => request.url);
    await vi.waitFor(() => expect(urls()).toEqual(['/events?type=Dataplane&type=DataplaneInsight&type=MeshTimeout&mesh=default']));
    shown = 'payments';
    changes.reconsider();
    await vi.waitFor(() => expect(urls()).toHaveLength(2));
    expect(urls()[1]).toBe('/events?type=Dataplane&type=DataplaneInsight&type=MeshTimeout');
    stopPolicies();
    await vi.waitFor(() => expect(urls()).toHaveLength(3));
    expect(urls()[2]).toBe('/events?type=Dataplane&type=DataplaneInsight&mesh=payments');
    changes.watch({ types: ['Mesh'], ...ignore });
    await vi.waitFor(() => expect(urls()).toHaveLength(4));
    expect(urls()[3]).toBe('/events?type=Dataplane&type=DataplaneInsight&type=Mesh');
  });

  it('connects again for the kinds watched when a watcher stops, and not at all when none is left', async () => {
    const endpoint = new EventsEndpoint();
    const changes = new ChangeStream({ apiUrl: '', headers: () => ({}), fetch: endpoint.fetch, retryDelayMs: () => 0 });
    stream = changes;
    changes.start();
    const stopZones = changes.watch({ types: ['Zone'], onChange: () => undefined, onResync: () => undefined });
    const stopMeshes = changes.watch({ types: ['Mesh'], onChange: () => undefined, onResync: () => undefined });
    await vi.waitFor(() => expect(endpoint.requests.map((request) => request.url)).toEqual(['/events?type=Mesh&type=Zone']));
    stopZones();
    await vi.waitFor(() => expect(endpoint.requests.map((request) => request.url)).toEqual(['/events?type=Mesh&type=Zone', '/events?type=Mesh']));
    stopMeshes();
    await vi.waitFor(() => expect(changes.state.value).toBe('idle'));
    expect(endpoint.requests).toHaveLength(2);
  });
});
