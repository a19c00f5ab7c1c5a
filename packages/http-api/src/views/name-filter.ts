import type { Request } from 'express';

/** The `name` query parameter of a computed list: a case-sensitive substring, '' for all. */
export function nameFilter(req: Request): string {
  const value = req.query.name;
  return typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '';
}
