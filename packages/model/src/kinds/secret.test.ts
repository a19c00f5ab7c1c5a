import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { secretKind } from './secret.js';

describe('Secret', () => {
  it('keeps base64 data, an empty value included', () => {
    expect(decodeSpec(secretKind, { data: 'c2VjcmV0' })).toEqual({ ok: true, spec: { data: 'c2VjcmV0' } });
    expect(decodeSpec(secretKind, { data: 'YQ==' })).toEqual({ ok: true, spec: { data: 'YQ==' } });
    expect(decodeSpec(secretKind, { data: '' })).toEqual({ ok: true, spec: { data: '' } });
  });

  it('ignores line breaks in the data and drops unknown fields', () => {
    expect(decodeSpec(secretKind, { data: 'c2Vj\ncmV0\r\n', value: 'x' })).toEqual({ ok: true, spec: { data: 'c2VjcmV0' } });
  });

  it('refuses data that is not padded standard base64, or not a string', () => {
    for (const data of ['not base64!', 'YQ', 'c2VjcmV0=', 'YQ=a', '-_-_', 7]) {
      expect(decodeSpec(secretKind, { data })).toMatchObject({ ok: false });
    }
  });

  it('validates nothing', () => {
    expect(secretKind.validate({ data: undefined })).toEqual([]);
  });
});
