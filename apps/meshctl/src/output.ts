// Output in the three formats: aligned tables (as the reference's CLI prints them), YAML that
// `meshctl apply -f` accepts back, and JSON.
import type { AnyKind } from '@mesh/model';
import { stringify } from 'yaml';

export type Format = 'table' | 'yaml' | 'json';

export interface Column<T> {
  header: string;
  value: (item: T) => string;
}

/** Columns padded to their widest cell, three spaces apart. */
export function table<T>(columns: readonly Column<T>[], items: readonly T[]): string {
  const rows = [columns.map((c) => c.header), ...items.map((item) => columns.map((c) => c.value(item)))];
  const widths = columns.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]! + 3))).join('').trimEnd()).join('\n') + '\n';
}

/**
 * A table printed a row at a time, as changes arrive: the columns are as wide as the first rows
 * (the current state) made them; a longer cell later pushes its row's next cells along.
 */
export class TableStream<T> {
  private widths: number[] | undefined;

  constructor(private readonly columns: readonly Column<T>[]) {}

  /** The header and the first rows, aligned together. */
  start(items: readonly T[]): string {
    const text = table(this.columns, items);
    const rows = [this.columns.map((c) => c.header), ...items.map((item) => this.columns.map((c) => c.value(item)))];
    this.widths = this.columns.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
    return text;
  }

  /** One more row; `lastCell` in place of the last column's value when given. */
  row(item: T, lastCell?: string): string {
    const cells = this.columns.map((c, i) => (lastCell !== undefined && i === this.columns.length - 1 ? lastCell : c.value(item)));
    const widths = this.widths ?? cells.map((cell) => cell.length);
    return cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]! + 3))).join('').trimEnd() + '\n';
  }
}

/** One resource, or a list of them as the API lists them. */
export function structured(format: 'yaml' | 'json', value: unknown): string {
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value);
}

/** How long ago, as the reference prints ages: `45s`, `3m`, `2h`, `4d`, `never`. */
export function ago(time: string | undefined, now = Date.now()): string {
  if (!time) return 'never';
  const seconds = Math.max(0, Math.floor((now - Date.parse(time)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** A resource as the API returns it: its meta, and its spec under `spec` or beside the meta, depending on the kind. */
export interface ApiResource {
  mesh?: string;
  name: string;
  creationTime?: string;
  spec?: unknown;
  [field: string]: unknown;
}

/** The table `get` prints of a kind: mesh, name, the kind's own columns (`cliColumns`, from the resource's spec), age. */
export function kindColumns(kind: AnyKind): Column<ApiResource>[] {
  const mesh: Column<ApiResource>[] = kind.scope === 'mesh' ? [{ header: 'MESH', value: (resource) => resource.mesh ?? '' }] : [];
  const own = (kind.cliColumns ?? []).map((column): Column<ApiResource> => ({ header: column.header, value: (resource) => column.value(kind.specField ? resource.spec : resource) }));
  return [...mesh, { header: 'NAME', value: (resource) => resource.name }, ...own, { header: 'AGE', value: (resource) => ago(resource.creationTime) }];
}
