// The proxy resource a runner registers: a YAML or JSON template with `{{ name }}` placeholders
// (`--dataplane-var name=value`), as the reference's runner reads it (mustache: a placeholder
// without a value renders empty; `a.b` names a nested value).
import { parse as parseYaml } from 'yaml';

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

export function renderTemplate(template: string, vars: Readonly<Record<string, string>>): string {
  return template.replace(PLACEHOLDER, (_, key: string) => vars[key] ?? '');
}

/** `k=v` options as a map; a later value of a key wins. */
export function parseVars(pairs: readonly string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const pair of pairs) {
    for (const part of pair.split(',')) {
      const at = part.indexOf('=');
      if (at <= 0) throw new Error(`--dataplane-var: expected key=value, got "${part}"`);
      vars[part.slice(0, at)] = part.slice(at + 1);
    }
  }
  return vars;
}

export interface ProxyResource {
  readonly type: string;
  readonly mesh: string;
  readonly name: string;
  readonly body: Record<string, unknown>;
}

/** The kind of resource each `--proxy-type` registers (the runner depends on none of the control plane's packages). */
const RESOURCE_TYPES: Readonly<Record<string, string>> = { dataplane: 'Dataplane', ingress: 'ZoneIngress', egress: 'ZoneEgress' };

export const isProxyType = (value: string): boolean => Object.hasOwn(RESOURCE_TYPES, value);

/** Reads the rendered template: a resource of the proxy type's kind, with a name (and a mesh for dataplanes). */
export function readResource(text: string, proxyType: string): ProxyResource {
  let body: unknown;
  try {
    body = parseYaml(text);
  } catch (error) {
    throw new Error(`the dataplane template is neither YAML nor JSON: ${(error as Error).message}`, { cause: error });
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error('the dataplane template must describe one resource (an object)');
  const record = body as Record<string, unknown>;
  if (!isProxyType(proxyType)) throw new Error(`invalid proxy type "${proxyType}"`);
  const expected = RESOURCE_TYPES[proxyType]!;
  if (record.type !== expected) throw new Error(`invalid proxy resource type "${String(record.type)}", expected ${expected}`);
  const name = typeof record.name === 'string' ? record.name : '';
  const mesh = typeof record.mesh === 'string' ? record.mesh : '';
  if (name === '') throw new Error('name: cannot be empty');
  if (proxyType === 'dataplane' && mesh === '') throw new Error('mesh: cannot be empty');
  return { type: expected, mesh, name, body: record };
}
