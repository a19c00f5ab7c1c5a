import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getKind } from '@mesh/model';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChangeEvent, type ChangeGroup } from './event.js';
import { EventStream, type FlushScheduler } from './stream.js';
import { EventClient } from './testing.js';

let server: Server | undefined;
let client: EventClient | undefined;

afterEach(async () => {
  client?.close();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = client = undefined;
});

/** A stream over a real connection, its writes counted, and the flushes it asked for. */
async function openStream(maxBufferedBytes = 1024 * 1024) {
  const queued: EventStream[] = [];
  const scheduler: FlushScheduler = { queued: (stream) => queued.push(stream) };
  let response!: ServerResponse;
  const opened = new Promise<EventStream>((resolve) => {
    server = createServer((_req, res) => {
      response = res;
      const stream = new EventStream(res, () => true, 'all', maxBufferedBytes, scheduler);
      stream.begin();
      resolve(stream);
    }).listen(0, '127.0.0.1');
  });
  await new Promise((resolve) => server!.once('listening', resolve));
  client = await EventClient.open(`http://127.0.0.1:${(server!.address() as AddressInfo).port}/`);
  const stream = await opened;
  return { stream, queued, writes: vi.spyOn(response, 'write') };
}

const deleted = (revision: number, name: string): ChangeGroup => ({ revision, events: [new ChangeEvent(revision, getKind('Dataplane'), 'default', name, undefined)] });

describe('EventStream', () => {
  it('queues what comes before a flush and writes it in one piece, in order', async () => {
    const { stream, queued, writes } = await openStream();
    stream.deliver(deleted(7, 'dp-1'), 7);
    stream.deliver(deleted(8, 'dp-2'), 8);
    stream.comment();
    expect(queued).toEqual([stream]);
    expect(writes).not.toHaveBeenCalled();

    stream.flush();
    expect(writes).toHaveBeenCalledTimes(1);
    await client!.until((c) => c.events.length === 2 && c.comments === 1);
    expect(client!.events).toEqual([
      { event: 'delete', id: '7', data: { revision: 7, type: 'Dataplane', mesh: 'default', name: 'dp-1' } },
      { event: 'delete', id: '8', data: { revision: 8, type: 'Dataplane', mesh: 'default', name: 'dp-2' } },
    ]);

    // Queued again after a flush, the next change asks for the next flush.
    stream.deliver(deleted(9, 'dp-3'), 9);
    expect(queued).toEqual([stream, stream]);
  });

  it('writes what is queued before it ends', async () => {
    const { stream } = await openStream();
    stream.deliver(deleted(3, 'dp-1'), 3);
    stream.end();
    await client!.until((c) => c.ended);
    expect(client!.events.map((e) => e.data.name)).toEqual(['dp-1']);
  });

  it('counts what is queued against the buffer a client may leave unread', async () => {
    const frame = deleted(1, 'dp-0').events[0]!.frame(true).length;
    const { stream } = await openStream(frame * 3);
    for (let revision = 1; revision <= 4; revision++) stream.deliver(deleted(revision, `dp-${revision}`), revision);
    expect(stream.ended).toBe(true);
    await client!.until((c) => c.ended);
    // What was queued is dropped: the client lists again from the revision resync carries.
    expect(client!.events).toEqual([{ event: 'resync', data: { revision: 4 } }]);
  });
});
