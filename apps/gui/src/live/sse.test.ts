import { describe, expect, it } from 'vitest';
import { SseParser, type ServerSentEvent } from './sse.js';

function parse(...chunks: string[]): { events: ServerSentEvent[]; parser: SseParser } {
  const events: ServerSentEvent[] = [];
  const parser = new SseParser((event) => events.push(event));
  for (const chunk of chunks) parser.push(chunk);
  return { events, parser };
}

describe('the Server-Sent Events parser', () => {
  it('reads the change stream as the control plane writes it: events of a revision, the last carrying its id', () => {
    const { events, parser } = parse(
      'event: put\ndata: {"revision":41,"type":"Dataplane","name":"web-1"}\n\n',
      'id: 41\nevent: synced\ndata: {"revision":41}\n\n',
      ': keep-alive\n\n',
      'id: 42\nevent: delete\ndata: {"revision":42,"type":"Dataplane","name":"web-1"}\n\n',
    );
    expect(events).toEqual([
      { event: 'put', data: '{"revision":41,"type":"Dataplane","name":"web-1"}', lastEventId: '' },
      { event: 'synced', data: '{"revision":41}', lastEventId: '41' },
      { event: 'delete', data: '{"revision":42,"type":"Dataplane","name":"web-1"}', lastEventId: '42' },
    ]);
    expect(parser.resumeFrom).toBe('42');
  });

  it('reassembles events split anywhere across chunks, a CRLF pair included', () => {
    const stream = 'id: 7\r\nevent: put\r\ndata: {"a":1}\r\n\r\nevent: resync\ndata: {"revision":9}\n\n';
    for (let at = 1; at < stream.length; at++) {
      const { events } = parse(stream.slice(0, at), stream.slice(at));
      expect(events, `split at ${at}`).toEqual([
        { event: 'put', data: '{"a":1}', lastEventId: '7' },
        { event: 'resync', data: '{"revision":9}', lastEventId: '7' },
      ]);
    }
    const { events } = parse(...stream.split(''));
    expect(events).toHaveLength(2);
  });

  it('joins data lines, defaults the type to message, takes lone CRs as line ends and ignores unknown fields and comments', () => {
    const { events, parser } = parse('data: first\ndata:second\rdata\rfoo: bar\r: comment\r\rretry: 2500\n\n');
    expect(events).toEqual([{ event: 'message', data: 'first\nsecond\n', lastEventId: '' }]);
    expect(parser.retryMs).toBe(2500);
  });

  it('dispatches nothing for an event without data, nor for an incomplete one, but keeps its id', () => {
    const { events, parser } = parse('id: 3\nevent: put\n\n', 'event: put\ndata: {"half":');
    expect(events).toEqual([]);
    expect(parser.resumeFrom).toBe('3');
  });
});
