// A body checked against its kind's schema the way the reference checks the targetRef policies
// against their OpenAPI schemas, before any rule of the kind runs (docs/policies.md, Validation):
// every mismatch is a violation at the field's path, in the schema validator's words.
import type { z } from 'zod';
import type { Violation } from './violations.js';

/** The JSON type of a value, as the schema validator names what it received. */
function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The schema's name of the type zod expected; the schemas checked this way declare integers only, never fractions. */
const SCHEMA_TYPES: Record<string, string> = { int: 'integer', number: 'integer', record: 'object', map: 'object' };

/** `spec.to[0].default`: fields joined with dots, indexes in brackets. */
function pathOf(root: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc === '' ? String(part) : `${acc}.${String(part)}`), root);
}

/** The pattern as the schema writes it (`^[a-z]+$`), without the slashes of a JS literal. */
const patternText = (pattern: string | undefined): string => (pattern ?? '').replace(/^\/(.*)\/[a-z]*$/s, '$1');

/** Go's `%v` of a list of enum values: `[Allow Deny]`. */
const goList = (values: readonly unknown[]): string => `[${values.map(String).join(' ')}]`;

function messageOf(issue: z.core.$ZodIssue, received: unknown, present: boolean): string {
  if (!present) return 'in body is required';
  switch (issue.code) {
    case 'invalid_type':
      return `in body must be of type ${SCHEMA_TYPES[issue.expected] ?? issue.expected}: ${JSON.stringify(jsonTypeOf(received))}`;
    case 'invalid_value':
      return `in body should be one of ${goList(issue.values)}`;
    case 'invalid_union':
      return 'must validate at least one schema (anyOf)';
    case 'too_small':
      if (issue.origin === 'string') return `in body should be at least ${issue.minimum} chars long`;
      if (issue.origin === 'array') return `in body should have at least ${issue.minimum} items`;
      return `in body should be greater than or equal to ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `in body should be at most ${issue.maximum} chars long`;
      if (issue.origin === 'array') return `in body should have at most ${issue.maximum} items`;
      return `in body should be less than or equal to ${issue.maximum}`;
    case 'invalid_format':
      return issue.format === 'regex' ? `in body should match '${patternText((issue as { pattern?: string }).pattern)}'` : `in body must be of format ${issue.format}`;
    default:
      return issue.message;
  }
}

/** The value at a path of the body, and whether it is there. */
function lookup(body: unknown, path: readonly PropertyKey[]): { present: boolean; value: unknown } {
  let value = body;
  for (const part of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return { present: false, value: undefined };
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return { present: value !== undefined, value };
}

export type SchemaCheck<T> = { ok: true; value: T } | { ok: false; violations: Violation[] } | { ok: false; decodeError: string };

/**
 * Parses `body` with `schema`. Schema mismatches (types, required fields, enums, lengths, ranges,
 * patterns) are violations at `root.<path>`; when there are none, a value the schema accepts but
 * Go cannot decode (a malformed duration, a number out of its type's range) is a decode error.
 */
export function checkAgainstSchema<T>(schema: z.ZodType<T>, body: unknown, root: string): SchemaCheck<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return { ok: true, value: parsed.data };
  const schemaIssues = parsed.error.issues.filter((issue) => issue.code !== 'custom');
  if (schemaIssues.length === 0) return { ok: false, decodeError: parsed.error.issues[0]!.message };
  return {
    ok: false,
    violations: schemaIssues.map((issue) => {
      const { present, value } = lookup(body, issue.path);
      return { field: pathOf(root, issue.path), message: messageOf(issue, value, present) };
    }),
  };
}
