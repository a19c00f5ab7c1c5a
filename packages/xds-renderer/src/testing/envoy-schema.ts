// Tests only: checks rendered resources against Envoy's own .proto definitions (the envoy-api tree
// `@grpc/grpc-js-xds` ships). A proto3-JSON object is walked field by field: unknown keys, wrong
// JSON types, two members of a oneof, undefined enum names and broken protoc-gen-validate rules
// (required fields and oneofs, lengths, bounds) are errors. The object is then converted to the
// form protobufjs encodes (durations, wrappers, Structs and nested Anys included) and encoded.
import { envoyRoot, protobuf, WRAPPER_TYPES } from '../envoy-protos.js';

const lowerCamel = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const jsonNameOf = (field: protobuf.Field): string => (field.options?.json_name as string | undefined) ?? lowerCamel(field.name);

const fieldsByKey = new WeakMap<protobuf.Type, Map<string, protobuf.Field>>();

/** A message's fields by proto name and by JSON name. */
function fieldsOf(type: protobuf.Type): Map<string, protobuf.Field> {
  let fields = fieldsByKey.get(type);
  if (!fields) {
    fields = new Map();
    for (const field of type.fieldsArray) {
      fields.set(field.name, field);
      fields.set(jsonNameOf(field), field);
    }
    fieldsByKey.set(type, fields);
  }
  return fields;
}

const DURATION = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/;
const INT64 = /^-?\d+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const INT_RANGES: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  sint32: [-(2 ** 31), 2 ** 31 - 1],
  sfixed32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  fixed32: [0, 2 ** 32 - 1],
};
const INT64_TYPES = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);

class SchemaChecker {
  readonly errors: string[] = [];

  constructor(private readonly root: protobuf.Root) {}

  private fail(path: string, message: string): undefined {
    this.errors.push(`${path || '<root>'}: ${message}`);
    return undefined;
  }

  /** Checks an object whose `@type` names its message; returns it converted for encoding. */
  anyMessage(path: string, value: Record<string, unknown>): { type: protobuf.Type; converted: Record<string, unknown> } | undefined {
    const typeUrl = value['@type'];
    if (typeof typeUrl !== 'string' || !typeUrl.startsWith('type.googleapis.com/')) return this.fail(path, `"@type" must be a type URL, got ${JSON.stringify(typeUrl)}`);
    const typeName = typeUrl.slice('type.googleapis.com/'.length);
    let type: protobuf.Type;
    try {
      type = this.root.lookupType(typeName);
    } catch {
      return this.fail(path, `unknown message type ${typeName}`);
    }
    const { '@type': _, ...fields } = value;
    const converted = this.message(`${path}<${type.name}>`, type, fields);
    return converted ? { type, converted } : undefined;
  }

  private message(path: string, type: protobuf.Type, value: unknown): Record<string, unknown> | undefined {
    if (!isObject(value)) return this.fail(path, `expected an object for ${type.fullName}, got ${JSON.stringify(value)}`);
    const fields = fieldsOf(type);
    const converted: Record<string, unknown> = {};
    const oneofMembers = new Map<string, string>();
    for (const [key, fieldValue] of Object.entries(value)) {
      if (fieldValue === undefined) continue;
      const field = fields.get(key);
      const fieldPath = path ? `${path}.${key}` : key;
      if (!field) {
        this.fail(fieldPath, `unknown field of ${type.fullName}`);
        continue;
      }
      if (field.options?.['(envoy.annotations.disallowed_by_default)']) this.fail(fieldPath, 'field is disallowed by default');
      if (field.partOf) {
        const other = oneofMembers.get(field.partOf.name);
        if (other) this.fail(fieldPath, `oneof ${field.partOf.name} already set by ${other}`);
        oneofMembers.set(field.partOf.name, key);
      }
      const result = this.field(fieldPath, field, fieldValue);
      if (result !== undefined) converted[field.name] = result;
    }
    this.checkRequired(path, type, value);
    return converted;
  }

  /** protoc-gen-validate's required fields and oneofs. */
  private checkRequired(path: string, type: protobuf.Type, value: Record<string, unknown>): void {
    const present = (field: protobuf.Field): boolean => value[field.name] !== undefined || value[jsonNameOf(field)] !== undefined;
    for (const field of type.fieldsArray) {
      // Rules of a oneof member only apply when it is the member set.
      if (field.partOf) continue;
      const options = field.options ?? {};
      const required = options['(validate.rules).message.required'] || options['(validate.rules).duration.required'] || options['(validate.rules).any.required'];
      if (required && !present(field)) this.fail(path, `required field ${field.name} of ${type.fullName} is missing`);
    }
    for (const oneof of type.oneofsArray) {
      if (oneof.options?.['(validate.required)'] && !oneof.fieldsArray.some(present)) {
        this.fail(path, `one of ${oneof.fieldsArray.map((f) => f.name).join(', ')} is required in ${type.fullName}`);
      }
    }
  }

  private field(path: string, field: protobuf.Field, value: unknown): unknown {
    const rules = field.options ?? {};
    if (field instanceof protobuf.MapField) {
      if (!isObject(value)) return this.fail(path, 'expected an object (map)');
      const minPairs = rules['(validate.rules).map.min_pairs'] as number | undefined;
      if (minPairs !== undefined && Object.keys(value).length < minPairs) this.fail(path, `map needs at least ${minPairs} entries`);
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.single(`${path}[${key}]`, field, item)]));
    }
    if (field.repeated) {
      if (!Array.isArray(value)) return this.fail(path, 'expected an array');
      const minItems = rules['(validate.rules).repeated.min_items'] as number | undefined;
      if (minItems !== undefined && value.length < minItems) this.fail(path, `needs at least ${minItems} items`);
      return value.map((item, index) => this.single(`${path}[${index}]`, field, item));
    }
    return this.single(path, field, value);
  }

  /** Bounds from `(validate.rules).<kind>.{gt,gte,lt,lte}`. */
  private checkBounds(path: string, field: protobuf.Field, kind: string, value: number): void {
    const rules = field.options ?? {};
    const bound = (name: string): number | undefined => rules[`(validate.rules).${kind}.${name}`] as number | undefined;
    const [gt, gte, lt, lte] = ['gt', 'gte', 'lt', 'lte'].map(bound);
    if (gt !== undefined && !(value > gt)) this.fail(path, `must be > ${gt}`);
    if (gte !== undefined && !(value >= gte)) this.fail(path, `must be >= ${gte}`);
    if (lt !== undefined && !(value < lt)) this.fail(path, `must be < ${lt}`);
    if (lte !== undefined && !(value <= lte)) this.fail(path, `must be <= ${lte}`);
  }

  private single(path: string, field: protobuf.Field, value: unknown): unknown {
    if (value === null) return this.fail(path, 'null is not a value');
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Enum) {
      if (typeof value === 'string' && value in resolved.values) return value;
      if (typeof value === 'number' && Object.values(resolved.values).includes(value)) return value;
      return this.fail(path, `${JSON.stringify(value)} is not a value of ${resolved.fullName}`);
    }
    if (resolved instanceof protobuf.Type) return this.messageValue(path, resolved, value, field);
    return this.scalar(path, field, field.type, value);
  }

  private scalar(path: string, field: protobuf.Field, scalarType: string, value: unknown): unknown {
    const rules = field.options ?? {};
    switch (scalarType) {
      case 'string': {
        if (typeof value !== 'string') return this.fail(path, `expected a string, got ${JSON.stringify(value)}`);
        const minLen = (rules['(validate.rules).string.min_len'] ?? rules['(validate.rules).string.min_bytes']) as number | undefined;
        if (minLen !== undefined && value.length < minLen) this.fail(path, `needs at least ${minLen} characters`);
        return value;
      }
      case 'bool':
        return typeof value === 'boolean' ? value : this.fail(path, `expected a boolean, got ${JSON.stringify(value)}`);
      case 'double':
      case 'float':
        if (typeof value !== 'number') return this.fail(path, `expected a number, got ${JSON.stringify(value)}`);
        this.checkBounds(path, field, scalarType, value);
        return value;
      case 'bytes':
        return typeof value === 'string' && BASE64.test(value) ? value : this.fail(path, 'expected base64 text');
      default: {
        if (INT64_TYPES.has(scalarType)) {
          if (!(typeof value === 'string' && INT64.test(value)) && !(typeof value === 'number' && Number.isInteger(value))) {
            return this.fail(path, `expected a 64-bit integer, got ${JSON.stringify(value)}`);
          }
          if (scalarType.startsWith('u') || scalarType === 'fixed64') {
            if (String(value).startsWith('-')) this.fail(path, 'must not be negative');
          }
          this.checkBounds(path, field, scalarType, Number(value));
          return String(value);
        }
        const range = INT_RANGES[scalarType];
        if (!range) return this.fail(path, `unsupported scalar type ${scalarType}`);
        if (typeof value !== 'number' || !Number.isInteger(value) || value < range[0] || value > range[1]) {
          return this.fail(path, `expected a ${scalarType}, got ${JSON.stringify(value)}`);
        }
        this.checkBounds(path, field, scalarType, value);
        return value;
      }
    }
  }

  /** Messages, with the special JSON forms of the well-known types. */
  private messageValue(path: string, type: protobuf.Type, value: unknown, holder: protobuf.Field): unknown {
    if (WRAPPER_TYPES.has(type.fullName)) {
      const valueField = type.fields.value;
      if (!valueField) return this.fail(path, 'malformed wrapper type');
      // Rules of wrapped scalars are written on the field holding the wrapper.
      const wrapped = this.scalar(path, holder, valueField.type, value);
      return wrapped === undefined ? undefined : { value: wrapped };
    }
    switch (type.fullName) {
      case '.google.protobuf.Duration': {
        const match = typeof value === 'string' ? DURATION.exec(value) : null;
        if (!match) return this.fail(path, `expected a duration like "5s", got ${JSON.stringify(value)}`);
        const sign = match[1] === '-' ? -1 : 1;
        return { seconds: sign * Number(match[2]), nanos: sign * Number((match[3] ?? '').padEnd(9, '0')) };
      }
      case '.google.protobuf.Timestamp': {
        const millis = typeof value === 'string' ? Date.parse(value) : Number.NaN;
        if (Number.isNaN(millis)) return this.fail(path, `expected an RFC 3339 timestamp, got ${JSON.stringify(value)}`);
        return { seconds: Math.floor(millis / 1000), nanos: (millis % 1000) * 1e6 };
      }
      case '.google.protobuf.Any': {
        if (!isObject(value)) return this.fail(path, 'expected an object with "@type"');
        const inner = this.anyMessage(path, value);
        if (!inner) return undefined;
        return { type_url: value['@type'], value: inner.type.encode(inner.type.fromObject(inner.converted)).finish() };
      }
      case '.google.protobuf.Struct':
        return isObject(value) ? { fields: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, structValue(v)])) } : this.fail(path, 'expected an object (Struct)');
      case '.google.protobuf.Value':
        return structValue(value);
      case '.google.protobuf.Empty':
        return isObject(value) && Object.keys(value).length === 0 ? {} : this.fail(path, 'expected {}');
      default:
        return this.message(path, type, value);
    }
  }
}

function structValue(value: unknown): Record<string, unknown> {
  if (value === null) return { nullValue: 0 };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(structValue) } };
  return { structValue: { fields: Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, structValue(v)])) } };
}

/**
 * The problems Envoy would find decoding a resource from its proto3 JSON (empty when none), after
 * encoding it to the binary form with the real message definitions.
 */
export function envoySchemaErrors(resource: Record<string, unknown>): string[] {
  const checker = new SchemaChecker(envoyRoot());
  const result = checker.anyMessage('', resource);
  if (result && checker.errors.length === 0) {
    const message = result.type.fromObject(result.converted);
    const problem = result.type.verify(message);
    if (problem) checker.errors.push(`verify: ${problem}`);
    else result.type.decode(result.type.encode(message).finish());
  }
  return checker.errors;
}
