// One log line per API request, with a request id: the caller's `x-request-id` when it sends one,
// a new UUID otherwise, echoed back. The line has pino-http's shape (`req`, `res`, `responseTime`,
// `request completed`), written with one log call when the answer is sent: building child loggers
// per request, as pino-http does, cost more than serving a cached read. Credentials never reach
// the log: no header is logged.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

const REQUEST_ID = 'x-request-id';
const VALID_ID = /^[\w.:-]{1,128}$/;

export function requestLog(logger: Logger): (req: IncomingMessage, res: ServerResponse) => void {
  // The entry holds none of the keys the logger redacts (passwords, tokens), so its lines skip the
  // redaction pass, which cost more than the rest of the line.
  const requests = logger.child({}, { redact: [] });
  return (req, res) => {
    const started = Date.now();
    const sent = req.headers[REQUEST_ID];
    const id = typeof sent === 'string' && VALID_ID.test(sent) ? sent : randomUUID();
    res.setHeader(REQUEST_ID, id);
    // A response closes once it is sent, or when its connection goes first.
    res.on('close', () => {
      const entry = { req: { id, method: req.method, url: req.url }, res: { statusCode: res.statusCode }, responseTime: Date.now() - started };
      if (res.statusCode >= 500) requests.error(entry, 'request errored');
      else if (!res.writableFinished) requests.info(entry, 'request aborted');
      else requests.info(entry, 'request completed');
    });
  };
}
