// One log line per API request (pino-http), with a request id: the caller's `x-request-id` when
// it sends one, a new UUID otherwise, echoed back. Credentials never reach the log.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

const REQUEST_ID = 'x-request-id';

export function requestLog(logger: Logger): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  return pinoHttp({
    logger,
    genReqId(req, res) {
      const sent = req.headers[REQUEST_ID];
      const id = typeof sent === 'string' && /^[\w.:-]{1,128}$/.test(sent) ? sent : randomUUID();
      res.setHeader(REQUEST_ID, id);
      return id;
    },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    redact: ['req.headers.authorization', 'req.headers.cookie'],
  });
}
