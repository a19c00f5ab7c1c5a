// How the pages write times and counts.

/** A timestamp as the browser's locale writes it, or '—' without one. */
export function formatTime(value: string | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}

/** A count the API writes as a number or a string of digits (uint64 in proto3 JSON). */
export const count = (value: number | string | undefined): number => Number(value ?? 0);
