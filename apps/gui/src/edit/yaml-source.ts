// The YAML an editor holds (docs/gui.md, Editing): what it starts from, and read back as a resource
// with its syntax errors at their line and the line of a field path the API names in its errors
// (`spec.to[0].default.http`). Only the edit page loads it, and the YAML library with it.
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, stringify, type Document, type Node } from 'yaml';
import { apiPathTemplate, type EditTarget } from './resource-edit.js';

/** Something wrong with the YAML or the resource it holds: where, when known, and what. */
export interface SourceProblem {
  /** 1-based line of the YAML it concerns. */
  line?: number;
  /** The API's field path (`spec.to[0].default.http.requestTimeout`). */
  field?: string;
  message: string;
}

export type ParsedSource = { ok: true; value: unknown; locate: (field: string) => number | undefined } | { ok: false; problems: SourceProblem[] };

/** Parses the editor's text: its value and a way to find a field's line, or its syntax errors. */
export function parseSource(text: string): ParsedSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    return { ok: false, problems: doc.errors.map((error) => ({ line: lineCounter.linePos(error.pos[0]).line, message: error.message.split('\n')[0] ?? error.message })) };
  }
  return { ok: true, value: doc.toJS(), locate: (field) => lineOfField(doc, lineCounter, field) };
}

/**
 * The segments of a field path as the API writes them: names joined by dots, `[0]` for an index,
 * `["mesh.io/service"]` for a map key that is not a plain name.
 */
export function fieldSegments(field: string): Array<string | number> {
  const segments: Array<string | number> = [];
  for (const match of field.matchAll(/\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|([^.[\]]+)/g)) {
    if (match[1] !== undefined) segments.push(Number(match[1]));
    else if (match[2] !== undefined) segments.push(JSON.parse(match[2]) as string);
    else if (match[3] !== undefined) segments.push(match[3]);
  }
  return segments;
}

/**
 * The line of the deepest node of the path the YAML holds: the field's own line, or for a field
 * that is missing (`spec.targetRef` left out), the line of the part above it that is there.
 */
function lineOfField(doc: Document, lineCounter: LineCounter, field: string): number | undefined {
  let node: unknown = doc.contents;
  let offset = startOf(node);
  for (const segment of fieldSegments(field)) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment));
      if (!pair) break;
      offset = startOf(pair.key) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number' && segment < node.items.length) {
      node = node.items[segment];
      offset = startOf(node) ?? offset;
    } else {
      break;
    }
  }
  return offset === undefined ? undefined : lineCounter.linePos(offset).line;
}

const startOf = (node: unknown): number | undefined => (node && typeof node === 'object' && 'range' in node ? (node as Node).range?.[0] : undefined);

/** The resource documented for the kind (the OpenAPI document's example), placed in `mesh`. */
export function exampleYaml(target: EditTarget, examples: Readonly<Record<string, Record<string, unknown>>>): string {
  const example = examples[apiPathTemplate(target.kind)];
  const resource: Record<string, unknown> = example ? { ...example } : { type: target.kind.name, name: '' };
  if (target.kind.meshScoped) {
    const { type, mesh: _exampleMesh, name, ...rest } = resource;
    return stringify({ type, mesh: target.mesh, name, ...rest });
  }
  return stringify(resource);
}

/** A stored resource as the editor shows it: without the times the control plane keeps. */
export function storedYaml(resource: Record<string, unknown>): string {
  const { creationTime: _created, modificationTime: _modified, ...rest } = resource;
  return stringify(rest);
}
