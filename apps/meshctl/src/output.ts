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
