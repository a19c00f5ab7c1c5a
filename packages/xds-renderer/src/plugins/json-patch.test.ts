import { describe, expect, it } from 'vitest';
import { applyJsonPatch, JsonPatchError } from './json-patch.js';

describe('applyJsonPatch', () => {
  it('adds, removes, replaces, moves and copies members and list items', () => {
    const document = { a: { b: 1 }, list: [1, 2, 3], 'x/y': { '~z': 0 } };
    expect(
      applyJsonPatch(structuredClone(document), [
        { op: 'add', path: '/a/c', value: { d: true } },
        { op: 'add', path: '/list/1', value: 9 },
        { op: 'add', path: '/list/-', value: 4 },
        { op: 'remove', path: '/list/0' },
        { op: 'replace', path: '/x~1y/~0z', value: 5 },
        { op: 'copy', from: '/a/b', path: '/copied' },
        { op: 'move', from: '/a/c', path: '/moved' },
      ]),
    ).toEqual({ a: { b: 1 }, list: [9, 2, 3, 4], 'x/y': { '~z': 5 }, copied: 1, moved: { d: true } });
  });

  it('counts negative indices from the end, ignores removing what is missing, and creates what adding needs', () => {
    expect(applyJsonPatch({ list: [1, 2, 3] }, [{ op: 'remove', path: '/list/-1' }, { op: 'remove', path: '/nothing/here' }])).toEqual({ list: [1, 2] });
    expect(applyJsonPatch({}, [{ op: 'add', path: '/a/b/c', value: 1 }, { op: 'add', path: '/items/-', value: 'x' }])).toEqual({ a: { b: { c: 1 } }, items: ['x'] });
  });

  it('fails on replacing or moving what is not there, and on indices out of range', () => {
    expect(() => applyJsonPatch({}, [{ op: 'replace', path: '/a', value: 1 }])).toThrow(JsonPatchError);
    expect(() => applyJsonPatch({}, [{ op: 'move', from: '/a', path: '/b' }])).toThrow(JsonPatchError);
    expect(() => applyJsonPatch({ list: [] }, [{ op: 'add', path: '/list/3', value: 1 }])).toThrow(JsonPatchError);
  });
});
