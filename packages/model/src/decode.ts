import type { z } from 'zod';
import type { AnyKind, ListLimit } from './kind.js';
import type { Violation } from './validation/violations.js';

/** A body decoded, or why not: a field of the wrong type (`message`), or lists over their limits (`violations` too). */
export type DecodeResult = { ok: true; spec: Record<string, unknown> } | { ok: false; message: string; violations?: Violation[] };

const describePath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)), '');

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = describePath(issue.path);
  return where ? `${where}: ${issue.message}` : issue.message;
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The lists of `body` longer than their limits allow, for the kind named `kindName`. */
function listLimitViolations(kindName: string, limits: readonly ListLimit[], body: Record<string, unknown>): Violation[] {
  const violations: Violation[] = [];
  for (const { field, max, items } of limits) {
    const list = field.split('.').reduce<unknown>((at, key) => (isRecord(at) ? at[key] : undefined), body);
    if (Array.isArray(list) && list.length > max) violations.push({ field, message: `must have at most ${max} ${items} (the limit per ${kindName}), not ${list.length}` });
  }
  return violations;
}

/**
 * Decodes the spec fields of a request body into the normalised wire form.
 * Unknown fields are dropped; a field of the wrong JSON type fails the whole body, and so does a
 * list over its kind's limit, checked first.
 */
export function decodeSpec(kind: AnyKind, body: unknown): DecodeResult {
  if (!isRecord(body)) {
    return { ok: false, message: `expected a JSON object, got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}` };
  }
  const overLimit = listLimitViolations(kind.name, kind.listLimits ?? [], body);
  if (overLimit.length > 0) return { ok: false, message: overLimit.map((violation) => `${violation.field}: ${violation.message}`).join('; '), violations: overLimit };
  const parsed = kind.schema.safeParse(body);
  if (!parsed.success) return { ok: false, message: describeIssue(parsed.error.issues[0]!) };
  return { ok: true, spec: parsed.data as Record<string, unknown> };
}
