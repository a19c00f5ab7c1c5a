// One pagination helper for every list (docs/api.md, Lists).
import { DomainError } from '@mesh/model';
import type { Request } from 'express';
import { firstQueryValue } from './query.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export interface Page {
  /** Index of the first item; clients echo the `next` URL, whose offset is this index. */
  offset: number;
  /** 0 means every item. */
  size: number;
}

/** Reads `size` and `offset`; `title` is the title of the endpoint's errors. */
export function parsePage(req: Request, title = 'Could not retrieve resources'): Page {
  const sizeText = firstQueryValue(req.query.size);
  let size = DEFAULT_PAGE_SIZE;
  if (sizeText !== undefined && sizeText !== '') {
    if (!/^\d+$/.test(sizeText)) {
      throw new DomainError('bad_request', 'Invalid page size', { title, violations: [{ field: 'size', message: 'invalid format' }] });
    }
    size = Number(sizeText);
    if (size > MAX_PAGE_SIZE) {
      throw new DomainError('bad_request', 'Invalid page size', {
        title,
        violations: [{ field: 'size', message: `invalid page size of ${sizeText}. Maximum page size is ${MAX_PAGE_SIZE}` }],
      });
    }
  }
  const offsetText = firstQueryValue(req.query.offset);
  let offset = 0;
  if (offsetText !== undefined && offsetText !== '') {
    if (!/^\d+$/.test(offsetText) || !Number.isSafeInteger(Number(offsetText))) {
      throw new DomainError('bad_request', 'Invalid offset', { title, violations: [{ field: 'offset', message: 'Invalid format' }] });
    }
    offset = Number(offsetText);
  }
  return { offset, size };
}

/**
 * The URL of the next page, or null: same scheme, host and path, every original query
 * parameter with `offset` moved on, keys sorted (repeated keys keep their order).
 */
export function nextPageUrl(req: Request, page: Page, total: number): string | null {
  if (page.size === 0 || page.offset + page.size >= total) return null;
  const raw = req.originalUrl;
  const at = raw.indexOf('?');
  const path = at === -1 ? raw : raw.slice(0, at);
  const params = [...new URLSearchParams(at === -1 ? '' : raw.slice(at + 1))].filter(([key]) => key !== 'offset');
  params.push(['offset', String(page.offset + page.size)]);
  params.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${req.protocol}://${req.get('host') ?? 'localhost'}${path}?${formEncode(params)}`;
}

/** Form encoding as the reference's (Go `url.Values.Encode`): `*` escaped, `~` kept. */
const formEncode = (params: Array<[string, string]>): string =>
  new URLSearchParams(params).toString().replace(/\*/g, '%2A').replace(/%7E/g, '~');

/** The collection envelope `{total, items, next}` from already-serialised items. */
export const collectionJson = (items: readonly string[], total: number, next: string | null): string =>
  `{"total":${total},"items":[${items.join(',')}],"next":${JSON.stringify(next)}}`;
