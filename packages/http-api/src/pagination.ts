// One pagination helper for every list (docs/api.md, Lists).
import { DomainError } from '@mesh/model';
import type { Request } from 'express';
import { firstQueryValue } from './query.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** Where a list is ordered: each item by its mesh ('' for global kinds and meshes) and name. */
export interface PageKey {
  mesh: string;
  name: string;
}

export interface Page {
  /** Index of the first item, counted after `after` when there is one. */
  offset: number;
  /** 0 means every item. */
  size: number;
  /** Resume after this item: the cursor a `next` URL carries. */
  after?: PageKey;
}

/** What a list served: where its page starts among all the items, how many it holds, the last one. */
export interface ListedPage {
  /** Index of the page's first item among all the items. */
  start: number;
  total: number;
  last: PageKey | undefined;
}

/**
 * A cursor names the last item of a page, so the next page resumes after it wherever writes have
 * moved it: `~` and the base64url of `mesh NUL name`. A number is an index, as before; the
 * contract lets `offset` be any string (docs/api.md, Lists).
 */
const CURSOR = '~';

export const cursorOf = (key: PageKey): string => `${CURSOR}${Buffer.from(`${key.mesh}\u0000${key.name}`).toString('base64url')}`;

function keyOfCursor(text: string): PageKey | undefined {
  const encoded = text.slice(CURSOR.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
  const decoded = Buffer.from(encoded, 'base64url').toString('utf8');
  const at = decoded.indexOf('\u0000');
  if (at === -1) return undefined;
  const key = { mesh: decoded.slice(0, at), name: decoded.slice(at + 1) };
  // Only what this server wrote: one encoding of one key.
  return cursorOf(key) === text ? key : undefined;
}

/** Reads `size` and `offset` (an index or a cursor); `title` is the title of the endpoint's errors. */
export function parsePage(req: Request, title = 'Could not retrieve resources'): Page {
  // Express parses the query string again on every read of `req.query`.
  const query = req.query;
  const sizeText = firstQueryValue(query.size);
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
  const offsetText = firstQueryValue(query.offset);
  if (offsetText === undefined || offsetText === '') return { offset: 0, size };
  const invalid = () => new DomainError('bad_request', 'Invalid offset', { title, violations: [{ field: 'offset', message: 'Invalid format' }] });
  if (offsetText.startsWith(CURSOR)) {
    const after = keyOfCursor(offsetText);
    if (!after) throw invalid();
    return { offset: 0, size, after };
  }
  if (!/^\d+$/.test(offsetText) || !Number.isSafeInteger(Number(offsetText))) throw invalid();
  return { offset: Number(offsetText), size };
}

/**
 * The page of `page` from items in (mesh, name) order, as a list of the store pages it: after the
 * cursor's item (present or gone), then `offset` on.
 */
export function pageOf<T>(items: readonly T[], page: Page, keyOf: (item: T) => PageKey): { items: readonly T[]; listed: ListedPage } {
  let resume = 0;
  if (page.after) {
    const after = composed(page.after);
    resume = items.findIndex((item) => composed(keyOf(item)) > after);
    if (resume === -1) resume = items.length;
  }
  const first = Math.min(items.length, resume + page.offset);
  const slice = items.slice(first, page.size === 0 ? undefined : first + page.size);
  return { items: slice, listed: { start: first, total: items.length, last: slice.length > 0 ? keyOf(slice.at(-1)!) : undefined } };
}

/** (mesh, name) order is the order of `mesh NUL name` (as the stores keep it). */
const composed = (key: PageKey): string => `${key.mesh}\u0000${key.name}`;

/**
 * The URL of the next page, or null: same scheme, host and path, every original query parameter
 * with `offset` moved on to a cursor after the page's last item, keys sorted (repeated keys keep
 * their order). A client that follows `next` while items are written sees every item that
 * existed throughout exactly once.
 */
export function nextPageUrl(req: Request, page: Page, listed: ListedPage): string | null {
  if (page.size === 0 || listed.last === undefined || listed.start + page.size >= listed.total) return null;
  return `${req.protocol}://${req.get('host') ?? 'localhost'}${nextPathAndQuery(req.originalUrl, cursorOf(listed.last))}`;
}

/**
 * Next-page paths by request URL and cursor: a polled page asks for the same one again and again.
 * Bounded in entries and in the length of the URLs kept.
 */
const nextPaths = new Map<string, string>();
const MAX_NEXT_PATHS = 1024;
const MAX_KEPT_URL = 512;

function nextPathAndQuery(raw: string, cursor: string): string {
  const key = `${raw}\u0000${cursor}`;
  let next = nextPaths.get(key);
  if (next === undefined) {
    const at = raw.indexOf('?');
    const path = at === -1 ? raw : raw.slice(0, at);
    const params = [...new URLSearchParams(at === -1 ? '' : raw.slice(at + 1))].filter(([name]) => name !== 'offset');
    params.push(['offset', cursor]);
    params.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    next = `${path}?${formEncode(params)}`;
    if (raw.length <= MAX_KEPT_URL) {
      // Full: start again empty (clients walking many pages would otherwise only ever miss).
      if (nextPaths.size >= MAX_NEXT_PATHS) nextPaths.clear();
      nextPaths.set(key, next);
    }
  }
  return next;
}

/** Form encoding as the reference's (Go `url.Values.Encode`): `*` escaped, `~` kept. */
const formEncode = (params: Array<[string, string]>): string =>
  new URLSearchParams(params).toString().replace(/\*/g, '%2A').replace(/%7E/g, '~');

/** The collection envelope `{total, items, next}` from already-serialised items. */
export const collectionJson = (items: readonly string[], total: number, next: string | null): string =>
  `{"total":${total},"items":[${items.join(',')}],"next":${JSON.stringify(next)}}`;
