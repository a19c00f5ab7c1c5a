import type { z } from 'zod';
import { message } from '../wire.js';

/**
 * A message holding a proto `oneof` among `members` (listed in declaration order). The
 * reference's JSON decoder sets fields in declaration order and each set clears the other
 * members, so a body carrying several keeps the last declared one instead of failing.
 */
export function messageWithOneof<S extends z.ZodRawShape>(shape: S, members: ReadonlyArray<keyof S & string>) {
  return message(shape).transform((value) => {
    const fields: Record<string, unknown> = value;
    const set = members.filter((member) => fields[member] !== undefined);
    if (set.length <= 1) return value;
    const cleared = new Set<string>(set.slice(0, -1));
    return Object.fromEntries(Object.entries(fields).filter(([key]) => !cleared.has(key))) as typeof value;
  });
}
