import { describe, expect, it } from 'vitest';
import { filtersFromUrl, filtersToUrl, listQuery, NO_FILTERS } from './filters.js';

describe('the proxies list filters', () => {
  it('ask the server for one page of everything when empty', () => {
    expect(listQuery(NO_FILTERS, { size: 50 })).toEqual({ size: '50' });
  });

  it('become the API list query: name, tags, the service as its tag, the type as the gateway filter, the page cursor', () => {
    expect(listQuery({ name: ' web ', service: 'backend', tags: ['version:2', 'zone:*', 'no-colon', ''], type: 'standard', status: 'partiallyDegraded' }, { size: 25, offset: '~d2ViLTE' })).toEqual({
      size: '25',
      offset: '~d2ViLTE',
      name: 'web',
      tag: ['version:2', 'zone:*', 'mesh.io/service:backend'],
      gateway: 'false',
      status: 'partially_degraded',
    });
    expect(listQuery({ ...NO_FILTERS, type: 'builtin' }, { size: 10 }).gateway).toBe('builtin');
    expect(listQuery({ ...NO_FILTERS, type: 'delegated' }, { size: 10 }).gateway).toBe('delegated');
    expect(listQuery({ ...NO_FILTERS, status: 'online' }, { size: 10 }).status).toBe('online');
  });

  it('let the service filter win over a tag filter of the service tag', () => {
    expect(listQuery({ ...NO_FILTERS, service: 'web', tags: ['mesh.io/service:api', 'version:1'] }, { size: 10 }).tag).toEqual(['mesh.io/service:web', 'version:1']);
  });

  it('round-trip through the page URL, dropping empty and unknown values', () => {
    const filters = { name: 'web', service: 'backend', tags: ['version:2', 'zone:east'], type: 'delegated' as const, status: 'offline' as const };
    expect(filtersFromUrl(filtersToUrl(filters))).toEqual(filters);
    expect(filtersToUrl(NO_FILTERS)).toEqual({});
    expect(filtersFromUrl({ type: 'sidecar', status: 'up', tag: 'version:1', name: ['a', 'b'] })).toEqual({ name: 'a', service: '', tags: ['version:1'], type: '', status: '' });
  });
});
