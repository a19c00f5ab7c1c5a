import type { z } from 'zod';
import type { AnyKind } from './kind.js';

export type DecodeResult = { ok: true; spec: Record<string, unknown> } | { ok: false; message: string };

const describePath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)), '');

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = describePath(issue.path);
  return where ? `${where}: ${issue.message}` : issue.message;
}

/**
 * Decodes the spec fields of a request body into the normalised wire form.
 * Unknown fields are dropped; a field of the wrong JSON type fails the whole body.
 */
export function decodeSpec(kind: AnyKind, body: unknown): DecodeResult {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, message: `expected a JSON object, got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}` };
  }
  const parsed = kind.schema.safeParse(body);
  if (!parsed.success) return { ok: false, message: describeIssue(parsed.error.issues[0]!) };
  return { ok: true, spec: parsed.data as Record<string, unknown> };
}
