// Helpers for the kind tests: decode a request body as the API does, then validate it or look
// at the form it would be stored and returned in.
import { decodeSpec } from './decode.js';
import { DomainError } from './errors.js';
import type { AnyKind } from './kind.js';
import { readResourceBody } from './resource-body.js';
import type { Violation } from './validation/violations.js';

/** The decoded spec; throws when the body would be refused with 400 `Bad Request`. */
export function decoded(kind: AnyKind, body: unknown): Record<string, unknown> {
  const result = decodeSpec(kind, body);
  if (!result.ok) throw new Error(result.message);
  return result.spec;
}

/** The violations the body would be refused with (empty when it is valid). */
export const violationsOf = (kind: AnyKind, body: unknown): Violation[] => kind.validate(decoded(kind, body));

/** The spec as JSON text would carry it: fields decoded to `undefined` disappear. */
export const wireForm = (kind: AnyKind, body: unknown): unknown => JSON.parse(JSON.stringify(decoded(kind, body)));

/**
 * The violations a spec carried under the kind's `specField` would be refused with: the schema's
 * mismatches, else the kind's rules (empty when it is valid). Throws when it would fail decoding.
 */
export function specViolationsOf(kind: AnyKind, spec: unknown): Violation[] {
  try {
    return kind.validate(readResourceBody(kind, { [kind.specField ?? 'spec']: spec }).spec);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'invalid') return error.violations;
    throw error;
  }
}

/** A spec carried under the kind's `specField` as it would be stored and returned. */
export const storedSpec = (kind: AnyKind, spec: unknown): unknown =>
  JSON.parse(JSON.stringify(readResourceBody(kind, { [kind.specField ?? 'spec']: spec }).spec));
