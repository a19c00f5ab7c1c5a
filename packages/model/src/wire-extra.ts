// Wire building blocks beyond wire.ts, needed by the legacy policy kinds: 64-bit integers and
// bytes, in the form the reference's decoder accepts and its encoder emits.
import { z } from 'zod';

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
