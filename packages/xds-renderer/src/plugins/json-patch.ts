// JSON Patch (RFC 6902) on the proto3 JSON of a resource, as MeshProxyPatch applies its
// `jsonPatches` (docs/policies.md): negative array indices count from the end, removing what is
// not there is no error, and adding below missing objects or lists creates them.
import type { JsonValue } from '../envoy.js';

export interface JsonPatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'move' | 'copy';
  readonly path: string;
  readonly value?: unknown;
  readonly from?: string | undefined;
}

/** A patch that cannot be applied (a path to replace or move that is not there, an index out of range). */
export class JsonPatchError extends Error {}

type Container = JsonValue[] | { [key: string]: JsonValue | undefined };

const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;

function tokensOf(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new JsonPatchError(`invalid JSON pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

const isIndex = (token: string): boolean => /^-?\d+$/.test(token);

/** An array index; negative ones count from the end, `-` (when allowed) is one past the last. */
function indexIn(list: JsonValue[], token: string, forInsert: boolean): number {
  if (forInsert && token === '-') return list.length;
  if (!isIndex(token)) throw new JsonPatchError(`invalid array index ${JSON.stringify(token)}`);
  let index = Number(token);
  if (index < 0) index += list.length;
  const limit = forInsert ? list.length : list.length - 1;
  if (index < 0 || index > limit) throw new JsonPatchError(`array index ${token} out of range`);
  return index;
}

function child(container: Container, token: string): JsonValue | undefined {
  if (Array.isArray(container)) {
    if (!isIndex(token)) return undefined;
    let index = Number(token);
    if (index < 0) index += container.length;
    return container[index];
  }
  return Object.hasOwn(container, token) ? container[token] : undefined;
}

/** The container holding the last token of a pointer; with `create`, missing containers on the way are made. */
function parentOf(document: JsonValue, tokens: readonly string[], create: boolean): Container | undefined {
  let current: JsonValue | undefined = document;
  for (let at = 0; at < tokens.length - 1; at++) {
    const token = tokens[at] as string;
    if (!isContainer(current)) return undefined;
    let next = child(current, token);
    if (!isContainer(next)) {
      if (!create || Array.isArray(current)) return undefined;
      const following = tokens[at + 1] as string;
      next = isIndex(following) || following === '-' ? [] : {};
      current[token] = next;
    }
    current = next;
  }
  return isContainer(current) ? current : undefined;
}

function getAt(document: JsonValue, tokens: readonly string[]): JsonValue | undefined {
  if (tokens.length === 0) return document;
  const parent = parentOf(document, tokens, false);
  return parent === undefined ? undefined : child(parent, tokens[tokens.length - 1] as string);
}

function add(document: JsonValue, tokens: readonly string[], value: JsonValue): JsonValue {
  if (tokens.length === 0) return value;
  const parent = parentOf(document, tokens, true);
  const last = tokens[tokens.length - 1] as string;
  if (parent === undefined) throw new JsonPatchError(`cannot add at /${tokens.join('/')}`);
  if (Array.isArray(parent)) parent.splice(indexIn(parent, last, true), 0, value);
  else parent[last] = value;
  return document;
}

function remove(document: JsonValue, tokens: readonly string[], allowMissing: boolean): JsonValue {
  const parent = tokens.length === 0 ? undefined : parentOf(document, tokens, false);
  const last = tokens[tokens.length - 1] as string;
  if (parent === undefined || child(parent, last) === undefined) {
    if (allowMissing) return document;
    throw new JsonPatchError(`nothing to remove at /${tokens.join('/')}`);
  }
  if (Array.isArray(parent)) parent.splice(indexIn(parent, last, false), 1);
  else delete parent[last];
  return document;
}

/** The document with the operations applied in order (it is edited in place, and returned). */
export function applyJsonPatch(document: JsonValue, operations: readonly JsonPatchOperation[]): JsonValue {
  let result = document;
  for (const operation of operations) {
    const tokens = tokensOf(operation.path);
    switch (operation.op) {
      case 'add':
        result = add(result, tokens, structuredClone((operation.value ?? null) as JsonValue));
        break;
      case 'remove':
        result = remove(result, tokens, true);
        break;
      case 'replace':
        if (getAt(result, tokens) === undefined) throw new JsonPatchError(`nothing to replace at ${operation.path}`);
        result = remove(result, tokens, false);
        result = add(result, tokens, structuredClone((operation.value ?? null) as JsonValue));
        break;
      case 'move':
      case 'copy': {
        const fromTokens = tokensOf(operation.from ?? '');
        const value = getAt(result, fromTokens);
        if (value === undefined) throw new JsonPatchError(`nothing to ${operation.op} at ${operation.from ?? ''}`);
        if (operation.op === 'move') result = remove(result, fromTokens, false);
        result = add(result, tokens, operation.op === 'copy' ? structuredClone(value) : value);
        break;
      }
    }
  }
  return result;
}
