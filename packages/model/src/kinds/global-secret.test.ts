import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { globalSecretKind } from './global-secret.js';

describe('GlobalSecret', () => {
  it('is answered as type Secret and accepts both type names', () => {
    expect(globalSecretKind.wireType).toBe('Secret');
    expect(globalSecretKind.acceptedTypes).toEqual(['Secret', 'GlobalSecret']);
  });

  it('holds base64 data like a Secret, and validates nothing', () => {
    expect(decodeSpec(globalSecretKind, { data: 'dG9rZW4=', mesh: 'ignored' })).toEqual({ ok: true, spec: { data: 'dG9rZW4=' } });
    expect(decodeSpec(globalSecretKind, { data: '***' })).toMatchObject({ ok: false });
    expect(globalSecretKind.validate({ data: '' })).toEqual([]);
  });
});
