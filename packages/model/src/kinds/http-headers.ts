// HTTP header pieces of the targetRef policies: names, modifiers and matches.
import { z } from 'zod';
import { goList, str } from '../wire.js';

/** A lowercase header name (header names match case-insensitively). */
export const HeaderNameSchema = z.string().min(1).max(256).regex(/^[a-z0-9!#$%&'*+\-.^_\x60|~]+$/);

export const HeaderKeyValueSchema = z.object({ name: HeaderNameSchema, value: z.string() });

/** Headers set (replacing) and added (appending), at most 16 of each. */
export const headerSetAndAdd = {
  set: goList(HeaderKeyValueSchema, 16),
  add: goList(HeaderKeyValueSchema, 16),
};

export const HEADER_MATCH_TYPES = ['Exact', 'Present', 'RegularExpression', 'Absent', 'Prefix'] as const;

/** How a request header matches: `Exact` unless told. */
export const HeaderMatchSchema = z.object({
  type: z.enum(HEADER_MATCH_TYPES).optional(),
  name: HeaderNameSchema,
  value: str(),
});
export type HeaderMatch = z.infer<typeof HeaderMatchSchema>;
