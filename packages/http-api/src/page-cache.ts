// Unfiltered pages of resource lists, kept as encoded bytes until their type changes. Clients
// (the GUI above all) poll the same pages over and over; serving an unchanged page then costs
// what sending its bytes costs. Any write of the type, announced by the store, retires its pages.
import type { ResourceReader } from '@mesh/store';
import type { Response } from 'express';
import type { ListedPage } from './pagination.js';

const MAX_PAGES = 128;

interface CachedPage {
  generation: number;
  listed: ListedPage;
  /** The items of the page, joined and encoded: `{...},{...}`. */
  items: Buffer;
}

export class ListPageCache {
  private readonly generations = new Map<string, number>();
  private readonly pages = new Map<string, CachedPage>();

  constructor(store: ResourceReader) {
    store.onChange((change) => this.generations.set(change.type, this.generationOf(change.type) + 1));
  }

  /** The page, from the cache when its type has not changed since, else from `load`. */
  async page(type: string, key: string, load: () => Promise<{ items: string[]; listed: ListedPage }>): Promise<{ items: Buffer; listed: ListedPage }> {
    const cacheKey = `${type}\u0000${key}`;
    const generation = this.generationOf(type);
    const cached = this.pages.get(cacheKey);
    if (cached && cached.generation === generation) return cached;
    const loaded = await load();
    const page: CachedPage = { generation, listed: loaded.listed, items: Buffer.from(loaded.items.join(',')) };
    // A write during the load would make this page stale at once; it is served, not kept.
    if (this.generationOf(type) === generation) {
      this.pages.delete(cacheKey);
      if (this.pages.size >= MAX_PAGES) this.pages.delete(this.pages.keys().next().value!);
      this.pages.set(cacheKey, page);
    }
    return page;
  }

  private generationOf(type: string): number {
    return this.generations.get(type) ?? 0;
  }
}

/**
 * Pages assembled from immutable objects (stored resources, insights), kept with the objects they
 * were built from: a request that meets the very same objects again gets the same bytes, with no
 * copying (and no garbage); a page any of whose objects changed is rebuilt. Unlike the list page
 * cache, a write elsewhere in the type retires nothing.
 */
export class AssembledPages {
  private readonly pages = new Map<string, { sources: readonly unknown[]; items: Buffer }>();

  items(key: string, sources: readonly unknown[], build: () => Buffer): Buffer {
    const page = this.pages.get(key);
    if (page && page.sources.length === sources.length && page.sources.every((source, i) => source === sources[i])) return page.items;
    const items = build();
    this.pages.delete(key);
    if (this.pages.size >= MAX_PAGES) this.pages.delete(this.pages.keys().next().value!);
    this.pages.set(key, { sources, items });
    return items;
  }
}

/** Items already encoded, joined with commas into the `items` bytes `sendCollection` takes. */
export function joinItems(items: readonly Buffer[]): Buffer {
  let length = Math.max(0, items.length - 1);
  for (const item of items) length += item.length;
  const joined = Buffer.allocUnsafe(length);
  let at = 0;
  for (const [i, item] of items.entries()) {
    if (i > 0) joined[at++] = 0x2c; // ','
    at += item.copy(joined, at);
  }
  return joined;
}

/** Sends `{"total":n,"items":[...],"next":...}` in three writes, so the items are not copied. */
export function sendCollection(res: Response, items: Buffer, total: number, next: string | null): void {
  const head = `{"total":${total},"items":[`;
  const tail = `],"next":${JSON.stringify(next)}}`;
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(head) + items.length + Buffer.byteLength(tail));
  res.write(head);
  res.write(items);
  res.end(tail);
}
