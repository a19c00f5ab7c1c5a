import { describe, expect, it } from 'vitest';
import { parsedSpec } from './parsed-spec.js';
import type { StoredResource } from './store.js';

const stored = (spec: string): StoredResource =>
  Object.freeze({ type: 'Mesh', mesh: '', name: 'default', spec, version: 1, creationTime: '2024-01-01T00:00:00.000Z', modificationTime: '2024-01-01T00:00:00.000Z', labels: {} });

describe('parsedSpec', () => {
  it('parses a stored resource once for every reader, and another version afresh', () => {
    const first = stored('{"mtls":{"enabledBackend":"ca-1"}}');
    const spec = parsedSpec<{ mtls: { enabledBackend: string } }>(first);
    expect(spec).toEqual({ mtls: { enabledBackend: 'ca-1' } });
    expect(parsedSpec(first)).toBe(spec);
    const second = stored('{"mtls":{"enabledBackend":"ca-1"}}');
    expect(parsedSpec(second)).toEqual(spec);
    expect(parsedSpec(second)).not.toBe(spec);
  });
});
