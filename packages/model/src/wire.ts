// Building blocks for kind schemas. Specs travel in the reference's proto3-JSON form:
// camelCase names (snake_case accepted on input), unknown fields dropped, zero scalars and
// empty lists/maps omitted on output, wrapper scalars kept even when zero, durations accepted
// in Go form ("1h30m", "250ms") and emitted in seconds ("5400s", "0.250s").
import { z } from 'zod';

const camelCase = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * A message: known fields only (snake_case keys are renamed to their camelCase field); a field
 * set to null is absent, as the reference's decoder treats it.
 */
export function message<S extends z.ZodRawShape>(shape: S) {
  const known = new Set(Object.keys(shape));
  return z.preprocess((input) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
    let renamed: Record<string, unknown> | undefined;
    for (const [key, value] of Object.entries(input)) {
      if (value === null) {
        renamed ??= { ...(input as Record<string, unknown>) };
        delete renamed[key];
        continue;
      }
      if (known.has(key) || !key.includes('_')) continue;
      const camel = camelCase(key);
      if (!known.has(camel)) continue;
      renamed ??= { ...(input as Record<string, unknown>) };
      if (!(camel in renamed)) renamed[camel] = renamed[key];
      delete renamed[key];
    }
    return renamed ?? input;
  }, z.object(shape));
}

const nonZero = <T>(value: T): T | undefined =>
  value === 0 || value === '' || value === false ? undefined : value;

function integer(min: number, max: number) {
  return z.union([z.number(), z.string().regex(/^-?\d+$/, 'expected an integer')]).transform((v, ctx) => {
    const n = typeof v === 'string' ? Number(v) : v;
    if (!Number.isInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `expected an integer in [${min}, ${max}], got ${JSON.stringify(v)}` });
      return z.NEVER;
    }
    return n;
  });
}

const U32_MAX = 4294967295;
const I32 = 2147483647;

/** Plain proto3 scalars: the zero value is the same as absent and is omitted. */
export const str = () => z.string().optional().transform(nonZero);
export const bool = () => z.boolean().optional().transform(nonZero);
export const u32 = () => integer(0, U32_MAX).optional().transform(nonZero);
export const i32 = () => integer(-I32 - 1, I32).optional().transform(nonZero);
export const double = () => z.number().optional().transform(nonZero);

/** Wrapper scalars (google.protobuf.*Value): presence matters, zero is kept. */
export const u32Value = () => integer(0, U32_MAX).optional();
export const boolValue = () => z.boolean().optional();
export const doubleValue = () => z.number().optional();
export const strValue = () => z.string().optional();

/** Enum by name; the zero value (first name) is omitted like any proto3 zero. */
export function enumOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values).optional().transform((v) => (v === values[0] ? undefined : v));
}

/** Repeated field: omitted when empty. */
export const list = <T extends z.ZodType>(item: T) =>
  z.array(item).optional().transform((v) => (v && v.length > 0 ? v : undefined));

/** map<string,string> (tags, selectors): omitted when empty. */
export const stringMap = () =>
  z.record(z.string(), z.string()).optional().transform((v) => (v && Object.keys(v).length > 0 ? v : undefined));

/** A free-form JSON object (google.protobuf.Struct), kept as sent. */
export const struct = () => z.record(z.string(), z.unknown()).optional();

const DURATION_UNITS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Parses a Go duration ("1h30m", "0.2s", "-250ms", "0") into nanoseconds; undefined when malformed. */
export function parseDurationNanos(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < rest.length) {
    const match = DURATION_PART.exec(rest);
    if (!match) return undefined;
    total += Number(match[1]) * (DURATION_UNITS[match[2]!] ?? 0);
  }
  return sign * Math.round(total);
}

/** Formats nanoseconds the way proto3 JSON does: seconds with 0, 3, 6 or 9 fraction digits. */
export function formatDurationNanos(nanos: number): string {
  const sign = nanos < 0 ? '-' : '';
  const abs = Math.abs(nanos);
  const seconds = Math.floor(abs / 1e9);
  const fraction = abs % 1e9;
  if (fraction === 0) return `${sign}${seconds}s`;
  let digits = String(fraction).padStart(9, '0');
  if (digits.endsWith('000000')) digits = digits.slice(0, 3);
  else if (digits.endsWith('000')) digits = digits.slice(0, 6);
  return `${sign}${seconds}.${digits}s`;
}

/** google.protobuf.Duration: a message, so "0s" is kept (present but zero). */
export const duration = () =>
  z
    .string()
    .transform((text, ctx) => {
      const nanos = parseDurationNanos(text.trim());
      if (nanos === undefined) {
        ctx.addIssue({ code: 'custom', message: `invalid duration ${JSON.stringify(text)}` });
        return z.NEVER;
      }
      return formatDurationNanos(nanos);
    })
    .optional();

/** Nanoseconds of a normalised duration, for validators. */
export const durationNanos = (value: string | undefined): number | undefined =>
  value === undefined ? undefined : parseDurationNanos(value);


const U64_MAX = 2n ** 64n - 1n;

/** uint64: a number or a decimal string on input, a decimal string on output; zero omitted. */
export const u64 = () =>
  z
    .union([z.number().int(), z.string().regex(/^\d+$/, 'expected an integer')])
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const n = BigInt(value);
      if (n < 0n || n > U64_MAX) {
        ctx.addIssue({ code: 'custom', message: `expected an integer in [0, ${U64_MAX}], got ${JSON.stringify(value)}` });
        return z.NEVER;
      }
      return n === 0n ? undefined : n.toString();
    });

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * google.protobuf.BytesValue: padded standard base64, kept even when empty. Line breaks are
 * ignored on input, as Go's decoder does; anything else malformed is a decoding error.
 */
export const bytesValue = () =>
  z
    .string()
    .transform((text, ctx) => {
      const data = text.replace(/[\r\n]/g, '');
      if (!BASE64.test(data)) {
        ctx.addIssue({ code: 'custom', message: 'illegal base64 data' });
        return z.NEVER;
      }
      return data;
    })
    .optional();

// The targetRef policies travel in Go's JSON form instead (docs/policies.md, Wire form): fields as
// declared, numbers only where the schema says integer, durations in Go's own text ("1h0m0s"),
// empty lists and maps omitted unless a field keeps them, map keys sorted.

/** Formats nanoseconds as Go's `time.Duration` prints them: "0s", "1.5ms", "1h2m3.5s". */
export function formatGoDuration(nanos: number): string {
  const sign = nanos < 0 ? '-' : '';
  let rest = BigInt(Math.abs(Math.round(nanos)));
  if (rest === 0n) return '0s';
  const fraction = (value: bigint, digits: number): string => {
    const text = value.toString().padStart(digits, '0').replace(/0+$/, '');
    return text === '' ? '' : `.${text}`;
  };
  if (rest < 1_000_000_000n) {
    const [scale, digits, unit] = rest < 1_000n ? [1n, 0, 'ns'] : rest < 1_000_000n ? [1_000n, 3, 'µs'] : [1_000_000n, 6, 'ms'];
    return `${sign}${rest / scale}${fraction(rest % scale, digits)}${unit}`;
  }
  const seconds = `${(rest / 1_000_000_000n) % 60n}${fraction(rest % 1_000_000_000n, 9)}s`;
  rest /= 60_000_000_000n;
  if (rest === 0n) return `${sign}${seconds}`;
  const minutes = `${rest % 60n}m`;
  rest /= 60n;
  return rest === 0n ? `${sign}${minutes}${seconds}` : `${sign}${rest}h${minutes}${seconds}`;
}

/** A Go duration ("90s", "1h30m"), returned in Go's form ("1m30s"); malformed text fails decoding as Go's parser does. */
export const goDuration = () =>
  z.string().transform((text, ctx) => {
    const nanos = parseDurationNanos(text);
    if (nanos === undefined) {
      ctx.addIssue({ code: 'custom', message: `time: invalid duration ${JSON.stringify(text)}` });
      return z.NEVER;
    }
    return formatGoDuration(nanos);
  });

/** An integer the schema declares and Go decodes into a sized type: out of its range fails decoding. */
function goInteger(goType: string, min: number, max: number, schema = z.int()) {
  return schema.transform((n, ctx) => {
    if (n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `json: cannot unmarshal number ${n} into Go value of type ${goType}` });
      return z.NEVER;
    }
    return n;
  });
}

export const goInt32 = (schema = z.int()) => goInteger('int32', -(2 ** 31), 2 ** 31 - 1, schema);
export const goUint32 = (schema = z.int()) => goInteger('uint32', 0, U32_MAX, schema);
export const goInt64 = () => z.int();
export const goUint = (schema = z.int()) => goInteger('uint', 0, Number.MAX_SAFE_INTEGER, schema);

/** Kubernetes' IntOrString: a JSON integer or a string, kept as sent. */
export const intOrString = () => z.union([z.int(), z.string()]);

/** A list Go omits when empty (`omitempty` on a plain slice), of at most `maxItems` items if given. */
export const goList = <T extends z.ZodType>(item: T, maxItems = Number.MAX_SAFE_INTEGER) =>
  z.array(item).max(maxItems).optional().transform((v) => (v && v.length > 0 ? v : undefined));

/** map[string]string: omitted when empty, keys sorted as Go writes them. */
export const goStringMap = () =>
  z
    .record(z.string(), z.string())
    .optional()
    .transform((v) => {
      const keys = Object.keys(v ?? {}).sort();
      return keys.length > 0 ? Object.fromEntries(keys.map((key) => [key, v![key]!])) : undefined;
    });
