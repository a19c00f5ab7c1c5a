// Request bodies: JSON only, bounded in size and depth, so no input can exhaust the server.
import { DomainError } from '@mesh/model';
import type { Request } from 'express';
import { badRequest } from './errors.js';

export const MAX_BODY_BYTES = 8 * 1024 * 1024;
export const MAX_BODY_DEPTH = 64;

export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json';
}

/** The raw body, refusing a non-JSON content type (415) and bodies over the limit (413). */
export async function readBodyText(req: Request): Promise<string> {
  if (!isJsonContentType(req.get('content-type'))) {
    throw new DomainError('unsupported_media_type', 'Unsupported Media Type: the body must be application/json', { title: 'Unsupported Media Type' });
  }
  const declared = Number(req.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge(req);
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > MAX_BODY_BYTES) throw tooLarge(req);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The rest of a refused body is never read, so the connection cannot carry another request:
 * `Connection: close` tells the client not to reuse it (it would hang, then be reset).
 */
function tooLarge(req: Request): DomainError {
  req.res?.setHeader('Connection', 'close');
  return new DomainError('payload_too_large', `Request body is larger than ${MAX_BODY_BYTES} bytes`, { title: 'Payload Too Large' });
}

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
