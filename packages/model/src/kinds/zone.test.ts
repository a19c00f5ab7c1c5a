import { describe, expect, it } from 'vitest';
import { decodeSpec } from '../decode.js';
import { zoneKind } from './zone.js';

describe('Zone', () => {
  it('keeps `enabled`, false included, and drops unknown fields', () => {
    expect(decodeSpec(zoneKind, { enabled: true })).toEqual({ ok: true, spec: { enabled: true } });
    expect(decodeSpec(zoneKind, { enabled: false, url: 'grpcs://zone-1:5685' })).toEqual({ ok: true, spec: { enabled: false } });
    expect(decodeSpec(zoneKind, {})).toMatchObject({ ok: true, spec: {} });
  });

  it('validates nothing in the spec', () => {
    expect(zoneKind.validate({ enabled: false })).toEqual([]);
    expect(zoneKind.validate({ enabled: undefined })).toEqual([]);
  });

  it('refuses a field of the wrong JSON type', () => {
    expect(decodeSpec(zoneKind, { enabled: 'false' })).toMatchObject({ ok: false });
  });
});
