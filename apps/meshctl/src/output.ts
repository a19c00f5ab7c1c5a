// Output in the three formats: aligned tables (as the reference's CLI prints them), YAML that
// `meshctl apply -f` accepts back, and JSON.
import { type AnyKind, SERVICE_TAG } from '@mesh/model';
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

/** A matched policy of `/policies`: the full entity, of which the text shows the name. */
interface NamedPolicy {
  name: string;
}

/** The `/meshes/{mesh}/dataplanes/{name}/policies` body: per attachment of a sidecar, or per listener, host and route of a builtin gateway. */
export type DataplanePolicies =
  | { kind: 'SidecarDataplane'; items: Array<{ type: string; name?: string; service?: string; matchedPolicies: Record<string, NamedPolicy[]> }> }
  | {
      kind: 'MeshGatewayDataplane';
      policies?: Record<string, NamedPolicy>;
      listeners: Array<{
        protocol: string;
        port: number;
        hosts: Array<{ hostName: string; routes: Array<{ route: string; destinations: Array<{ tags: Record<string, string>; policies: Record<string, NamedPolicy> }> }> }>;
      }>;
    };

/**
 * The policies of a proxy as the reference's CLI prints them: each attachment (`INBOUND
 * <address>(<service>)`, `OUTBOUND ...`, `SERVICE <name>`, `DATAPLANE`), or each gateway listener,
 * host, route and destination, followed by its policy kinds with the names under them.
 */
export function policiesText(body: DataplanePolicies): string {
  const lines: string[] = [];
  const kinds = (policies: Record<string, NamedPolicy[]>, indent: string) => {
    for (const [kind, named] of Object.entries(policies)) lines.push(`${indent}${kind}`, ...named.map((policy) => `${indent}  ${policy.name}`));
  };
  const single = (policies: Record<string, NamedPolicy>) => Object.fromEntries(Object.entries(policies).map(([kind, policy]) => [kind, [policy]]));
  if (body.kind === 'SidecarDataplane') {
    for (const item of body.items) {
      const where = item.type === 'dataplane' ? 'DATAPLANE' : item.type === 'service' ? `SERVICE ${item.name}` : `${item.type.toUpperCase()} ${item.name}(${item.service})`;
      lines.push(`${where}:`);
      kinds(item.matchedPolicies, '  ');
      lines.push('');
    }
    return lines.length > 0 ? `${lines.join('\n')}\n` : '';
  }
  lines.push('MESHGATEWAY:');
  kinds(single(body.policies ?? {}), '  ');
  lines.push('');
  for (const listener of body.listeners) {
    lines.push(`LISTENER (${listener.protocol}:${listener.port}):`);
    for (const host of listener.hosts) {
      lines.push(`  ${host.hostName}:`);
      for (const route of host.routes) {
        lines.push(`    ROUTE ${route.route}:`);
        for (const destination of route.destinations) {
          lines.push(`      SERVICE ${destination.tags[SERVICE_TAG]}:`);
          kinds(single(destination.policies), '        ');
          lines.push('');
        }
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
