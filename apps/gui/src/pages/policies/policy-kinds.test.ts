import { describe, expect, it } from 'vitest';
import { describeTargetRef, groupKinds, type PolicyKind } from './policy-kinds.js';

const kind = (name: string, isTargetRefBased: boolean): PolicyKind => ({
  name,
  isTargetRefBased,
  readOnly: false,
  path: `${name.toLowerCase()}s`,
  displayName: name,
  singularDisplayName: name,
  pluralDisplayName: `${name}s`,
  isExperimental: false,
  isInbound: false,
  isOutbound: false,
});

describe('the policy kinds', () => {
  it('puts the targetRef kinds apart from the older ones, each group by name', () => {
    const grouped = groupKinds([kind('TrafficRoute', false), kind('MeshTimeout', true), kind('Timeout', false), kind('MeshAccessLog', true)]);
    expect(grouped.targetRef.map((k) => k.name)).toEqual(['MeshAccessLog', 'MeshTimeout']);
    expect(grouped.older.map((k) => k.name)).toEqual(['Timeout', 'TrafficRoute']);
  });
});

describe('a targetRef in a line', () => {
  it('names its kind, then the name and tags it selects', () => {
    expect(describeTargetRef({ kind: 'Mesh' })).toBe('Mesh');
    expect(describeTargetRef({ kind: 'MeshService', name: 'web' })).toBe('MeshService web');
    expect(describeTargetRef({ kind: 'MeshServiceSubset', name: 'web', tags: { version: 'v2', zone: 'east' } })).toBe('MeshServiceSubset web version=v2 zone=east');
    expect(describeTargetRef({ kind: 'MeshSubset', tags: { version: 'v2' } })).toBe('MeshSubset version=v2');
  });

  it('is a dash when there is none', () => {
    expect(describeTargetRef(undefined)).toBe('—');
    expect(describeTargetRef({})).toBe('—');
  });
});
