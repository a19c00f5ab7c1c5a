// A plain HTTP/1.1 client for the end-to-end tests that send what fetch would refuse or rewrite:
// raw paths (`..`, encoded slashes, bytes that are no UTF-8), any body bytes and content type,
// with a deadline on the answer so that a hang fails the test instead of stalling it. An `https:`
// base URL is reached over TLS, trusting any certificate (the control plane's own is generated).
import { request, type Agent, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface RawRequest {
  method: string;
  /** Sent as is: no normalisation of `..`, no re-encoding. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** How long to wait for the whole answer. */
  timeoutMs?: number;
  agent?: Agent;
}

export interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export class NoAnswer extends Error {
  override name = 'NoAnswer';
}

/** Sends one request to `baseUrl` (`http://127.0.0.1:port`, `https://...`) and reads the whole answer. */
export function sendRaw(baseUrl: string, raw: RawRequest): Promise<RawReply> {
  const { hostname, port, protocol } = new URL(baseUrl);
  const timeoutMs = raw.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...raw.headers };
    if (raw.body !== undefined) headers['content-length'] = Buffer.byteLength(raw.body);
    const options = { host: hostname, port: Number(port), method: raw.method, path: raw.path, headers, ...(raw.agent ? { agent: raw.agent } : { agent: false }) };
    const req = protocol === 'https:' ? httpsRequest({ ...options, rejectUnauthorized: false }) : request(options);
    const timer = setTimeout(() => {
      req.destroy();
      reject(new NoAnswer(`no answer within ${timeoutMs} ms to ${raw.method} ${raw.path.slice(0, 200)}`));
    }, timeoutMs);
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      // The server may answer (a 413) and close before the whole body is written: the answer counts.
      if (answered && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) return;
      clearTimeout(timer);
      reject(error);
    });
    if (raw.body !== undefined) req.write(raw.body);
    req.end();
  });
}

/** What is wrong with an error answer, or undefined when it carries the standard error body (docs/api.md, Errors). */
export function standardErrorProblem(reply: RawReply): string | undefined {
  if (!String(reply.headers['content-type'] ?? '').startsWith('application/json')) return `content-type ${reply.headers['content-type']}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(reply.text) as Record<string, unknown>;
  } catch {
    return `body is not JSON: ${reply.text.slice(0, 200)}`;
  }
  if (body.type !== '/std-errors') return `type ${String(body.type)}`;
  if (body.status !== reply.status) return `status ${String(body.status)} in a ${reply.status} answer`;
  if (typeof body.title !== 'string' || body.title === '') return 'no title';
  if (typeof body.detail !== 'string' || body.details !== body.detail) return 'detail and details differ or are missing';
  return undefined;
}
