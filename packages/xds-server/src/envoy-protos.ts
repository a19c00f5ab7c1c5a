// Envoy's v3 messages on the wire: the .proto files `@grpc/grpc-js-xds` ships under `deps/`,
// loaded once with protobufjs. Rendered resources are proto3-JSON objects (`@type` on every Any);
// they are written here straight to the binary form, field by field, from the message
// definitions (the well-known types in their JSON forms). Discovery requests are decoded with
// protobufjs.
import { envoyRoot, protobuf, WRAPPER_TYPES } from '@mesh/xds-renderer/envoy-protos';

export { envoyRoot };

type ProtoType = protobuf.Type;
type ProtoField = protobuf.Field;
type Writer = protobuf.Writer;

const TYPE_URL_PREFIX = 'type.googleapis.com/';

const lowerCamel = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const jsonNameOf = (field: ProtoField): string => (field.options?.json_name as string | undefined) ?? lowerCamel(field.name);

const DURATION = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A rendered resource the schema does not accept: a bug of the renderer, reported with its path. */
export class ResourceEncodingError extends Error {}

/**
 * Where the writer is in the resource, for error messages only: kept as a stack of keys, joined
 * when something fails, so that writing builds no path strings.
 */
const at: Array<string | number> = [];

function fail(path: string, message: string): never {
  const where = at.map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`)).join('');
  throw new ResourceEncodingError(`${path || '<root>'}${where}: ${message}`);
}


const WIRE_TYPE: Record<string, number> = {
  double: 1,
  float: 5,
  int32: 0,
  uint32: 0,
  sint32: 0,
  fixed32: 5,
  sfixed32: 5,
  int64: 0,
  uint64: 0,
  sint64: 0,
  fixed64: 1,
  sfixed64: 1,
  bool: 0,
  string: 2,
  bytes: 2,
};

/** How one field is written: its tag, and what it holds. */
interface FieldPlan {
  readonly field: ProtoField;
  readonly id: number;
  readonly repeated: boolean;
  /** Map fields: the key's scalar type. */
  readonly keyType: string | undefined;
  readonly message: ProtoType | undefined;
  readonly enumValues: Record<string, number> | undefined;
}

/** How a message is written: its full name (protobufjs builds it from the parents at every read) and its fields. */
interface MessagePlan {
  readonly fullName: string;
  /** By JSON name and by proto name. */
  readonly fields: Map<string, FieldPlan>;
}

const plans = new WeakMap<ProtoType, MessagePlan>();

/** A message's fields by JSON name and by proto name, each with what writing it takes (computed once per type). */
function planOf(type: ProtoType): MessagePlan {
  let plan = plans.get(type);
  if (!plan) {
    const fields = new Map<string, FieldPlan>();
    for (const field of type.fieldsArray) {
      const resolved = field.resolvedType;
      const entry: FieldPlan = {
        field,
        id: field.id,
        repeated: field.repeated,
        keyType: field instanceof protobuf.MapField ? field.keyType : undefined,
        message: resolved instanceof protobuf.Type ? resolved : undefined,
        enumValues: resolved instanceof protobuf.Enum ? resolved.values : undefined,
      };
      fields.set(field.name, entry);
      fields.set(jsonNameOf(field), entry);
    }
    plan = { fullName: type.fullName, fields };
    plans.set(type, plan);
  }
  return plan;
}

const typesByUrl = new Map<string, ProtoType>();

function lookupType(typeUrl: unknown, path: string): ProtoType {
  if (typeof typeUrl !== 'string' || !typeUrl.startsWith(TYPE_URL_PREFIX)) fail(path, `"@type" must be a type URL, got ${JSON.stringify(typeUrl)}`);
  let type = typesByUrl.get(typeUrl);
  if (!type) {
    try {
      type = envoyRoot().lookupType(typeUrl.slice(TYPE_URL_PREFIX.length));
    } catch {
      return fail(path, `unknown message type ${typeUrl}`);
    }
    typesByUrl.set(typeUrl, type);
  }
  return type;
}

/** Writes a scalar of a proto type (proto3 JSON forms: int64 as text or number, bytes as base64). */
function writeScalar(writer: Writer, type: string, value: unknown, path: string): void {
  switch (type) {
    case 'string':
      if (typeof value !== 'string') fail(path, `expected a string, got ${JSON.stringify(value)}`);
      writer.string(value);
      return;
    case 'bool':
      if (typeof value !== 'boolean') fail(path, `expected a boolean, got ${JSON.stringify(value)}`);
      writer.bool(value);
      return;
    case 'bytes':
      if (typeof value !== 'string') fail(path, 'expected base64 text');
      writer.bytes(Buffer.from(value, 'base64'));
      return;
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      if (typeof value !== 'string' && typeof value !== 'number') fail(path, `expected a 64-bit integer, got ${JSON.stringify(value)}`);
      writer[type](value);
      return;
    case 'double':
    case 'float':
    case 'int32':
    case 'uint32':
    case 'sint32':
    case 'fixed32':
    case 'sfixed32':
      if (typeof value !== 'number') fail(path, `expected a number, got ${JSON.stringify(value)}`);
      writer[type](value);
      return;
    default:
      fail(path, `unsupported scalar type ${type}`);
  }
}

/** Writes one value of a field (an element of a repeated field, or the value of a map entry) with its tag. */
function writeValue(writer: Writer, plan: FieldPlan, id: number, value: unknown, path: string): void {
  if (plan.message) {
    writer.uint32((id << 3) | 2).fork();
    writeMessage(writer, plan.message, value, path);
    writer.ldelim();
    return;
  }
  if (plan.enumValues) {
    const number = typeof value === 'number' ? value : plan.enumValues[String(value)];
    if (number === undefined) fail(path, `${JSON.stringify(value)} is not a value of the enum`);
    writer.uint32(id << 3).int32(number);
    return;
  }
  const type = plan.field.type;
  writer.uint32((id << 3) | (WIRE_TYPE[type] ?? 2));
  writeScalar(writer, type, value, path);
}

/** Writes the fields of a message given in proto3 JSON (the well-known types in their JSON forms). */
function writeMessage(writer: Writer, type: ProtoType, value: unknown, path: string): void {
  const plan = planOf(type);
  const { fullName } = plan;
  if (WRAPPER_TYPES.has(fullName)) {
    const wrapped = type.fields.value?.type ?? 'string';
    writer.uint32((1 << 3) | (WIRE_TYPE[wrapped] ?? 2));
    writeScalar(writer, wrapped, value, path);
    return;
  }
  switch (fullName) {
    case '.google.protobuf.Duration': {
      const match = typeof value === 'string' ? DURATION.exec(value) : null;
      if (!match) fail(path, `expected a duration like "5s", got ${JSON.stringify(value)}`);
      const sign = match[1] === '-' ? -1 : 1;
      const seconds = sign * Number(match[2]);
      const nanos = sign * Number((match[3] ?? '').padEnd(9, '0'));
      if (seconds !== 0) writer.uint32(8).int64(seconds);
      if (nanos !== 0) writer.uint32(16).int32(nanos);
      return;
    }
    case '.google.protobuf.Timestamp': {
      const millis = typeof value === 'string' ? Date.parse(value) : Number.NaN;
      if (Number.isNaN(millis)) fail(path, `expected an RFC 3339 timestamp, got ${JSON.stringify(value)}`);
      writer.uint32(8).int64(Math.floor(millis / 1000));
      if (millis % 1000 !== 0) writer.uint32(16).int32((millis % 1000) * 1e6);
      return;
    }
    case '.google.protobuf.Any':
      if (!isObject(value)) fail(path, 'expected an object with "@type"');
      writer.uint32(10).string(String(value['@type']));
      writer.uint32(18).fork();
      writeMessage(writer, lookupType(value['@type'], path), value, path);
      writer.ldelim();
      return;
    case '.google.protobuf.Struct':
      if (!isObject(value)) fail(path, 'expected an object (Struct)');
      writeStruct(writer, value);
      return;
    case '.google.protobuf.Value':
      writeStructValue(writer, value);
      return;
  }
  if (!isObject(value)) fail(path, `expected an object for ${fullName}`);
  for (const key in value) {
    const fieldValue = value[key];
    if (fieldValue === undefined || key === '@type') continue;
    const field = plan.fields.get(key);
    at.push(key);
    if (!field) fail(path, `unknown field of ${fullName}`);
    if (field.keyType !== undefined) {
      if (!isObject(fieldValue)) fail(path, 'expected an object (map)');
      for (const entryKey in fieldValue) {
        at.push(entryKey);
        writer.uint32((field.id << 3) | 2).fork();
        writer.uint32((1 << 3) | (WIRE_TYPE[field.keyType] ?? 2));
        writeScalar(writer, field.keyType, field.keyType === 'string' ? entryKey : Number(entryKey), path);
        writeValue(writer, field, 2, fieldValue[entryKey], path);
        writer.ldelim();
        at.pop();
      }
    } else if (field.repeated) {
      if (!Array.isArray(fieldValue)) fail(path, 'expected an array');
      for (let index = 0; index < fieldValue.length; index++) {
        at.push(index);
        writeValue(writer, field, field.id, fieldValue[index], path);
        at.pop();
      }
    } else {
      writeValue(writer, field, field.id, fieldValue, path);
    }
    at.pop();
  }
}

/** google.protobuf.Struct: map<string, Value> fields = 1. */
function writeStruct(writer: Writer, value: Record<string, unknown>): void {
  for (const key in value) {
    writer.uint32(10).fork();
    writer.uint32(10).string(key);
    writer.uint32(18).fork();
    writeStructValue(writer, value[key]);
    writer.ldelim();
    writer.ldelim();
  }
}

/** google.protobuf.Value: null 1, number 2, string 3, bool 4, struct 5, list 6 (ListValue: repeated Value = 1). */
function writeStructValue(writer: Writer, value: unknown): void {
  if (value === null || value === undefined) writer.uint32(8).int32(0);
  else if (typeof value === 'number') writer.uint32(17).double(value);
  else if (typeof value === 'string') writer.uint32(26).string(value);
  else if (typeof value === 'boolean') writer.uint32(32).bool(value);
  else if (Array.isArray(value)) {
    writer.uint32(50).fork();
    for (const item of value) {
      writer.uint32(10).fork();
      writeStructValue(writer, item);
      writer.ldelim();
    }
    writer.ldelim();
  } else {
    writer.uint32(42).fork();
    writeStruct(writer, value as Record<string, unknown>);
    writer.ldelim();
  }
}

/** The binary form of a typed proto3-JSON object (its `@type` names the message). */
export function encodeMessage(path: string, value: Record<string, unknown>): Uint8Array {
  const writer = protobuf.Writer.create();
  at.length = 0;
  writeMessage(writer, lookupType(value['@type'], path), value, path);
  return writer.finish();
}

/** The JSON value of a decoded google.protobuf.Struct (as protobufjs's toObject gives it). */
export function structToJson(struct: unknown): Record<string, unknown> {
  const fields = isObject(struct) && isObject(struct.fields) ? struct.fields : {};
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, valueToJson(value)]));
}

/**
 * A decoded google.protobuf.Value as JSON. protobufjs defines the well-known types itself, with
 * JSON (camel case) field names whatever the loading options.
 */
function valueToJson(value: unknown): unknown {
  if (!isObject(value)) return null;
  if ('stringValue' in value) return value.stringValue;
  if ('numberValue' in value) return value.numberValue;
  if ('boolValue' in value) return value.boolValue;
  if ('structValue' in value) return structToJson(value.structValue);
  if ('listValue' in value) return (isObject(value.listValue) && Array.isArray(value.listValue.values) ? value.listValue.values : []).map(valueToJson);
  return null;
}

const DECODE_OPTIONS = { longs: String, enums: String, defaults: false, arrays: true, oneofs: false };

const typesByName = new Map<string, ProtoType>();

/** Decodes a message of the named type into a plain object with proto field names. */
export function decodeMessage(typeName: string, bytes: Uint8Array): Record<string, unknown> {
  let type = typesByName.get(typeName);
  if (!type) typesByName.set(typeName, (type = envoyRoot().lookupType(typeName)));
  return type.toObject(type.decode(bytes), DECODE_OPTIONS);
}
