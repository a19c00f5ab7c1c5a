import { describe, expect, it } from 'vitest';
import { scalarText } from './envoy.js';

describe('scalarText', () => {
  it('writes strings, numbers and booleans as String does', () => {
    expect(scalarText('backend')).toBe('backend');
    expect(scalarText(9411)).toBe('9411');
    expect(scalarText(false)).toBe('false');
  });

  it('reads absent values, objects and lists as empty rather than "[object Object]"', () => {
    expect(scalarText(undefined)).toBe('');
    expect(scalarText(null)).toBe('');
    expect(scalarText({ name: 'backend' })).toBe('');
    expect(scalarText(['backend'])).toBe('');
  });
});
