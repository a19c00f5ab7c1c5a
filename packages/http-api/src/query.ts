// Query parameters as Express's simple parser gives them: a string, or an array when repeated.
import type { Request } from 'express';

/** Every string value of a parameter. */
export const queryValues = (value: unknown): string[] =>
  typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** The first value of a parameter, if any. */
export const firstQueryValue = (value: unknown): string | undefined => queryValues(value)[0];

/** The `name` parameter of a list: a case-sensitive substring, '' for all. */
export const nameFilter = (req: Request): string => firstQueryValue(req.query.name) ?? '';
