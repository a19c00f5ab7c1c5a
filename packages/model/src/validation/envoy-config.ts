// Envoy configuration embedded in policies (ProxyTemplate, MeshProxyPatch), read as the reference
// reads it: YAML, or JSON when the YAML parser gives up.
import { LineCounter, parseDocument } from 'yaml';

export type EnvoyConfigParse = { value: unknown } | { error: string; endOfInput: boolean };

export function parseEnvoyConfig(text: string): EnvoyConfigParse {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  const [error] = document.errors;
  if (error === undefined) {
    try {
      return { value: document.toJS() };
    } catch (failure) {
      // Unresolved aliases and alias bombs only show when the document is turned into values.
      return { error: (failure as Error).message, endOfInput: false };
    }
  }
  try {
    return { value: JSON.parse(text) };
  } catch (failure) {
    const { line, col } = lineCounter.linePos(error.pos[0]);
    return { error: `${error.message} at line ${line}, column ${col}`, endOfInput: endsTooSoon(text, (failure as Error).message) };
  }
}

/** Whether JSON failed only because the text stopped before the value was complete. */
function endsTooSoon(text: string, message: string): boolean {
  if (/end of JSON input/.test(message)) return true;
  const position = /at position (\d+)/.exec(message);
  return position !== null && Number(position[1]) >= text.trimEnd().length;
}

/** Go's name of a JSON value's type, as the reference's decoding errors spell it. */
export const goJsonType = (value: unknown): string => (Array.isArray(value) ? 'array' : typeof value === 'boolean' ? 'bool' : typeof value);
