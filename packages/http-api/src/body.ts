// Request bodies: JSON only, bounded in size and depth, so no input can exhaust the server.
import { DomainError } from '@mesh/model';
import type { Request } from 'express';
import { badRequest } from './errors.js';
import { DEFAULT_API_LIMITS } from './limits.js';

export const MAX_BODY_DEPTH = 64;

export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json';
}

/**
 * The raw body, refusing a non-JSON content type (415) and bodies over `maxBytes` (413,
 * `apiServer.maxRequestBodySize`). A body cut short (the client went away, or was too slow and the
 * server's read timeout closed the connection) is a 400 that nobody will read. The rest of a
 * refused body is read and dropped after the answer (src/limits.ts, guardConnections), so the
 * client can read the 413 and the connection serves its next request.
 */
export async function readBodyText(req: Request, maxBytes = DEFAULT_API_LIMITS.maxRequestBodySize): Promise<string> {
  if (!isJsonContentType(req.get('content-type'))) {
    throw new DomainError('unsupported_media_type', 'Unsupported Media Type: the body must be application/json', { title: 'Unsupported Media Type' });
  }
  if (Number(req.get('content-length') ?? 0) > maxBytes) throw tooLarge(maxBytes);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = () => {
      req.off('data', collect);
      req.off('end', finish);
      req.off('error', cut);
      req.off('aborted', cut);
    };
    const collect = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      stop();
      chunks.length = 0;
      // Flowing with no listener left: the rest is read and dropped.
      req.resume();
      reject(tooLarge(maxBytes));
    };
    const finish = () => {
      stop();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const cut = () => {
      stop();
      reject(badRequest('the request body was not received completely'));
    };
    req.on('data', collect);
    req.once('end', finish);
    req.once('error', cut);
    req.once('aborted', cut);
  });
}

const tooLarge = (maxBytes: number): DomainError =>
  new DomainError('payload_too_large', `Request body is larger than ${maxBytes} bytes`, { title: 'Payload Too Large' });

/** Parses a body of kind `kindName`; failures carry the reference's `invalid <Kind> object` wrapper. */
export function parseJsonBody(text: string, kindName: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw badRequest(`invalid ${kindName} object: '${(error as Error).message}'`);
  }
  if (nestingDepth(value) > MAX_BODY_DEPTH) {
    throw badRequest(`invalid ${kindName} object: 'nesting deeper than ${MAX_BODY_DEPTH} levels'`);
  }
  return value;
}

/** Depth of nested arrays/objects, without recursion (a hostile body cannot blow the stack). */
function nestingDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > deepest) deepest = depth;
    if (deepest > MAX_BODY_DEPTH) return deepest;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return deepest;
}
