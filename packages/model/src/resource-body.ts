// A resource body as the REST API and zone sync receive it: `{type, mesh, name, labels, ...spec}`,
// or `{type, mesh, name, labels, spec}` for the kinds that carry their spec under `spec`.
import type { AnyKind } from './kind.js';
import { decodeSpec } from './decode.js';
import { badRequest, invalidResource } from './errors.js';
import { checkAgainstSchema } from './validation/schema-violations.js';
import { keyPath, type Violation } from './validation/violations.js';

/** Labels the control plane sets on copies made by zone sync; a user's values for them are replaced. */
export const ORIGIN_LABEL = 'mesh.io/origin';
export const ZONE_LABEL = 'mesh.io/zone';
export const CONTROL_PLANE_LABELS: readonly string[] = [ORIGIN_LABEL, ZONE_LABEL];

export interface ResourceMeta {
  type: string;
  mesh: string;
  name: string;
}

export interface ResourceBody {
  meta: ResourceMeta;
  labels: Record<string, string>;
  spec: Record<string, unknown>;
}

const invalidObject = (kind: AnyKind, message: string) => badRequest(`invalid ${kind.name} object: '${message}'`);

/**
 * Splits a body into its meta, labels and decoded spec. A field of the wrong JSON type is a
 * decode failure (400 `invalid <Kind> object`), as in the reference; a list over its kind's limit
 * is a violation (400 `Resource is not valid`); a kind whose spec travels under `spec` is checked
 * against its schema instead (400 with every mismatch as a cause).
 */
export function readResourceBody(kind: AnyKind, body: unknown): ResourceBody {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidObject(kind, 'expected a JSON object');
  const record = body as Record<string, unknown>;
  const text = (field: keyof ResourceMeta): string => {
    const value = record[field];
    if (value === undefined || value === null) return '';
    if (typeof value !== 'string') throw invalidObject(kind, `${field}: expected a string, got ${typeof value}`);
    return value;
  };
  const meta = { type: text('type'), mesh: text('mesh'), name: text('name') };
  const labels = readLabels(kind, record.labels);
  if (kind.specField !== undefined) return { meta, labels, spec: readNestedSpec(kind, kind.specField, record[kind.specField]) };
  const decoded = decodeSpec(kind, body);
  if (!decoded.ok) throw decoded.violations ? invalidResource(decoded.violations) : invalidObject(kind, decoded.message);
  return { meta, labels, spec: decoded.spec };
}

/**
 * The spec a body carries under `field`. A body without one is checked as an empty spec (the
 * reference skips its schema then and reports its rules' messages; docs/policies.md).
 */
function readNestedSpec(kind: AnyKind, field: string, value: unknown): Record<string, unknown> {
  const checked = checkAgainstSchema(kind.schema, value ?? {}, field);
  if (checked.ok) return checked.value as Record<string, unknown>;
  if ('violations' in checked) throw invalidResource(checked.violations);
  throw invalidObject(kind, checked.decodeError);
}

function readLabels(kind: AnyKind, value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidObject(kind, `labels: expected an object, got ${Array.isArray(value) ? 'an array' : typeof value}`);
  const labels: Record<string, string> = {};
  for (const [key, label] of Object.entries(value)) {
    if (typeof label !== 'string') throw invalidObject(kind, `labels.${key}: expected a string, got ${label === null ? 'null' : typeof label}`);
    // An own data property, whatever the key (`__proto__` included), never the prototype.
    Object.defineProperty(labels, key, { value: label, enumerable: true, writable: true, configurable: true });
  }
  return labels;
}

const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** Label keys and values follow the Kubernetes rules, so resources move between environments. */
export function labelViolations(labels: Record<string, string>): Violation[] {
  const violations: Violation[] = [];
  for (const [key, value] of Object.entries(labels)) {
    const field = keyPath('labels', key);
    const slash = key.indexOf('/');
    const prefix = slash === -1 ? undefined : key.slice(0, slash);
    const name = slash === -1 ? key : key.slice(slash + 1);
    if (prefix !== undefined && (prefix.length > 253 || !LABEL_PREFIX.test(prefix))) {
      violations.push({ field, message: 'label key prefix must be a lowercase RFC 1123 subdomain of at most 253 characters' });
    } else if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name)) {
      violations.push({ field, message: "label key name must be at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character" });
    } else if (value.length > 63 || !LABEL_VALUE.test(value)) {
      violations.push({ field, message: "label value must be empty or at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character" });
    }
  }
  return violations;
}
