// Merging confs, with the facts of the reference's own merge cases (its fields as JSON).
import { describe, expect, it } from 'vitest';
import { mergeConfs, sameJson } from './target-ref-merge.js';

describe('mergeConfs', () => {
  it('replaces lists and values, later confs winning, but appends the `append…` lists, nested too', () => {
    const conf = (n: number, withField = true) => ({
      ...(withField ? { fieldString: `p${n}` } : {}),
      strings: [`p${n}`],
      appendStrings: [`p${n}`],
      sub: { ints: [n], appendInts: [n] },
      subPtr: { ints: [n], appendInts: [n] },
    });
    expect(mergeConfs([conf(1), conf(2), conf(3, false)])).toEqual({
      fieldString: 'p2',
      strings: ['p3'],
      appendStrings: ['p1', 'p2', 'p3'],
      sub: { ints: [3], appendInts: [1, 2, 3] },
      subPtr: { ints: [3], appendInts: [1, 2, 3] },
    });
  });

  it('keeps what a later conf leaves out, and a null removes it', () => {
    const first = { fieldString: 'p1', strings: ['p1'], appendStrings: ['p1'], sub: { ints: [1], appendInts: [1] }, subPtr: { ints: [1], appendInts: [1] } };
    expect(mergeConfs([first, { fieldString: 'p2', sub: {} }])).toEqual({ ...first, fieldString: 'p2' });
    expect(mergeConfs([first, { strings: null, subPtr: null }])).toEqual({ fieldString: 'p1', appendStrings: ['p1'], sub: { ints: [1], appendInts: [1] } });
  });

  it('appends the lists of confs that have them, whichever conf comes first', () => {
    const confs = [
      { fieldString: 'p1' },
      { fieldString: 'p2', sub: { appendInts: [2] }, subPtr: { appendInts: [2] } },
      { fieldString: 'p3', subPtr: { ints: [3] } },
      { fieldString: 'p4', strings: ['4'], appendStrings: ['4'], sub: { ints: [4], appendInts: [4] }, subPtr: { ints: [4], appendInts: [4] } },
    ];
    expect(mergeConfs(confs)).toEqual({
      fieldString: 'p4',
      strings: ['4'],
      appendStrings: ['4'],
      sub: { ints: [4], appendInts: [2, 4] },
      subPtr: { ints: [4], appendInts: [2, 4] },
    });
  });

  it('has no conf for no confs', () => {
    expect(mergeConfs([])).toBeUndefined();
  });

  const byKey = { byKey: { list: 'mergeValues', key: 'key', conf: 'default' } };

  it('merges the entries of a list by key across confs, leaving other lists whole', () => {
    const left = { left: true };
    const right = { right: true };
    const others = [
      { key: left, default: { a: true } },
      { key: left, default: { b: true } },
      { key: right, default: { b: true } },
    ];
    const merged = mergeConfs(
      [
        { mergeValues: [{ key: left, default: { a: true } }, { key: left, default: { b: true } }], otherValues: others },
        { mergeValues: [{ key: right, default: { b: true } }] },
      ],
      byKey,
    );
    expect(merged).toEqual({
      mergeValues: [
        { key: left, default: { a: true, b: true } },
        { key: right, default: { b: true } },
      ],
      otherValues: others,
    });
  });

  it('writes a list merged by key that no conf has as null', () => {
    expect(mergeConfs([{}], byKey)).toEqual({ mergeValues: null });
  });
});

describe('JSON values compared', () => {
  it('finds JSON values equal whatever their key order, and tells apart any difference in values, keys, arrays or types', () => {
    const listener = { name: 'l', address: { socketAddress: { address: '10.0.0.1', portValue: 80 } }, filterChains: [{ filters: [{ name: 'a' }, { name: 'b' }] }] };
    expect(sameJson(listener, structuredClone(listener))).toBe(true);
    expect(sameJson({ a: 1, b: [true, null, 'x'] }, { b: [true, null, 'x'], a: 1 })).toBe(true);
    const different: Array<[unknown, unknown]> = [
      [{ a: 1 }, { a: 2 }],
      [{ a: 1 }, { a: 1, b: 1 }],
      [{ a: 1, b: 1 }, { a: 1 }],
      [{ a: undefined }, {}],
      [{ a: [1, 2] }, { a: [2, 1] }],
      [{ a: [1] }, { a: [1, 1] }],
      [{ a: [] }, { a: {} }],
      [{ a: '1' }, { a: 1 }],
      [{ a: null }, { a: {} }],
      [{ ...listener, filterChains: [{ filters: [{ name: 'a' }, { name: 'c' }] }] }, listener],
    ];
    for (const [a, b] of different) {
      expect(sameJson(a, b)).toBe(false);
      expect(sameJson(b, a)).toBe(false);
    }
  });
});
