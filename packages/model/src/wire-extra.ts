// Wire building blocks beyond wire.ts, needed by the legacy policy kinds: 64-bit integers,
// bytes and oneof groups, in the form the reference's decoder accepts and its encoder emits.
import { z } from 'zod';
import { message } from './wire.js';

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

/** google.protobuf.BytesValue: standard padded base64 text, kept even when empty. */
export const bytesValue = () => z.string().regex(BASE64, 'expected standard base64 data').optional();

/**
 * A message holding one oneof group. The reference's decoder sets the members in declaration
 * order, each replacing the previous one, so when several are sent the last declared one wins.
 * String members use `strValue()`: a member set to "" is still the chosen one.
 */
export function oneof<S extends z.ZodRawShape>(shape: S) {
  const lastDeclaredFirst = Object.keys(shape).reverse();
  return message(shape).transform((group) => {
    const members = group as Record<string, unknown>;
    const chosen = lastDeclaredFirst.find((name) => members[name] !== undefined);
    return (chosen === undefined ? {} : { [chosen]: members[chosen] }) as typeof group;
  });
}
