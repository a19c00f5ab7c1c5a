import { describe, expect, it } from 'vitest';
import { EVENT, OutgoingBatch } from './transport-protocol.js';

interface Posted {
  bytes: Buffer | undefined;
  events: number[];
  notes: string[];
}

function batchPosting(): { batch: OutgoingBatch<string>; posted: Posted[] } {
  const posted: Posted[] = [];
  const batch = new OutgoingBatch<string>((bytes, events, notes) => posted.push({ bytes: bytes ? Buffer.from(bytes) : undefined, events, notes }));
  return { batch, posted };
}

/** Writes `message` when it fits, as the response writers do. */
const writing = (message: Buffer) => (into: Buffer) => (message.length <= into.length ? message.copy(into) : message.length);

/** The messages of a posted batch, per stream id. */
function messagesOf({ bytes, events }: Posted): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (let at = 0; at < events.length; at += 4) {
    if (events[at] === EVENT.data) out.push([events[at + 1]!, bytes!.subarray(events[at + 2], events[at + 2]! + events[at + 3]!).toString()]);
  }
  return out;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the batches between the data plane server and its transport', () => {
  it('posts the messages and events of one turn of the event loop together, in order, with their notes', async () => {
    const { batch, posted } = batchPosting();
    batch.addMessage(1, writing(Buffer.from('first')));
    batch.addNoted(EVENT.fail, 2, 'refused', 16);
    batch.addMessage(3, writing(Buffer.from('third')));
    batch.addEvent(EVENT.end, 1);
    expect(posted).toHaveLength(0);
    await nextTurn();
    expect(posted).toHaveLength(1);
    expect(messagesOf(posted[0]!)).toEqual([
      [1, 'first'],
      [3, 'third'],
    ]);
    expect(posted[0]!.events.filter((_, at) => at % 4 === 0)).toEqual([EVENT.data, EVENT.fail, EVENT.data, EVENT.end]);
    expect(posted[0]!.events.slice(4, 8)).toEqual([EVENT.fail, 2, 0, 16]);
    expect(posted[0]!.notes).toEqual(['refused']);
    await nextTurn();
    expect(posted).toHaveLength(1);
  });

  it('posts a full buffer at once and goes on in a new one; a message larger than a buffer gets one of its own', async () => {
    const { batch, posted } = batchPosting();
    const quarter = Buffer.alloc(64 * 1024, 'a');
    for (let id = 1; id <= 5; id++) batch.addMessage(id, writing(quarter));
    expect(posted).toHaveLength(1);
    expect(messagesOf(posted[0]!).map(([id]) => id)).toEqual([1, 2, 3, 4]);
    const large = Buffer.alloc(600 * 1024, 'b');
    batch.addMessage(6, writing(large));
    batch.addMessage(7, writing(Buffer.from('small')));
    await nextTurn();
    const messages = posted.flatMap(messagesOf);
    expect(messages.map(([id]) => id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(messages.find(([id]) => id === 6)?.[1]).toBe(large.toString());
    expect(messages.find(([id]) => id === 7)?.[1]).toBe('small');
  });

  it('posts events without bytes when no message came', async () => {
    const { batch, posted } = batchPosting();
    batch.addEvent(EVENT.end, 4);
    batch.flush();
    expect(posted).toEqual([{ bytes: undefined, events: [EVENT.end, 4, 0, 0], notes: [] }]);
    await nextTurn();
    expect(posted).toHaveLength(1);
  });
});
