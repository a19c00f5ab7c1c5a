// The proxies list's filters (docs/gui.md, What it shows), kept in the page's URL so a
// filtered list can be linked, and turned into the API's list query (docs/api.md, Lists): the
// server filters and pages, so a filtered page is as fast as an unfiltered one.
import type { ProxyStatus, ProxyType } from './status.js';

export const SERVICE_TAG = 'mesh.io/service';

export interface ProxyFilters {
  /** A part of the name. */
  name: string;
  /** A service (`mesh.io/service`), matched as a part of the tag's value. */
  service: string;
  /** `key:value` tag filters; `*` as the value matches any. */
  tags: string[];
  type: ProxyType | '';
  /** As the mesh insight counts it (docs/insights.md, Status). */
  status: ProxyStatus | '';
}

export const NO_FILTERS: ProxyFilters = { name: '', service: '', tags: [], type: '', status: '' };

const GATEWAY_OF_TYPE: Readonly<Record<ProxyType, NonNullable<ListQuery['gateway']>>> = { standard: 'false', builtin: 'builtin', delegated: 'delegated' };
const STATUS_PARAMETER: Readonly<Record<ProxyStatus, NonNullable<ListQuery['status']>>> = { online: 'online', offline: 'offline', partiallyDegraded: 'partially_degraded' };

export interface ListQuery {
  name?: string;
  tag?: string[];
  gateway?: 'true' | 'false' | 'builtin' | 'delegated';
  status?: 'online' | 'offline' | 'partially_degraded';
  size?: string;
  offset?: string;
}

/** The list query of these filters and page. A service filter is the tag filter of `mesh.io/service`, and wins over a tag filter of that key. */
export function listQuery(filters: ProxyFilters, page: { size: number; offset?: string | undefined }): ListQuery {
  const tags = filters.tags.map((tag) => tag.trim()).filter((tag) => /^[^:]+:.+$/.test(tag));
  const byKey = new Map(tags.map((tag) => [tag.slice(0, tag.indexOf(':')), tag] as const));
  const service = filters.service.trim();
  if (service !== '') byKey.set(SERVICE_TAG, `${SERVICE_TAG}:${service}`);
  const query: ListQuery = { size: String(page.size) };
  if (page.offset) query.offset = page.offset;
  const name = filters.name.trim();
  if (name !== '') query.name = name;
  if (byKey.size > 0) query.tag = [...byKey.values()];
  if (filters.type !== '') query.gateway = GATEWAY_OF_TYPE[filters.type];
  if (filters.status !== '') query.status = STATUS_PARAMETER[filters.status];
  return query;
}

type UrlQuery = Record<string, string | null | undefined | Array<string | null>>;

const first = (value: UrlQuery[string]): string => (Array.isArray(value) ? (value[0] ?? '') : (value ?? ''));
const all = (value: UrlQuery[string]): string[] => (Array.isArray(value) ? value : value ? [value] : []).filter((v): v is string => typeof v === 'string' && v !== '');

/** The filters a page URL's query holds (`?name=web&service=backend&tag=version:2&type=builtin&status=offline`). */
export function filtersFromUrl(query: UrlQuery): ProxyFilters {
  const type = first(query.type);
  const status = first(query.status);
  return {
    name: first(query.name),
    service: first(query.service),
    tags: all(query.tag),
    type: type === 'standard' || type === 'builtin' || type === 'delegated' ? type : '',
    status: status === 'online' || status === 'offline' || status === 'partiallyDegraded' ? status : '',
  };
}

/** The page URL's query for these filters, without empty ones. */
export function filtersToUrl(filters: ProxyFilters): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  if (filters.name.trim() !== '') query.name = filters.name.trim();
  if (filters.service.trim() !== '') query.service = filters.service.trim();
  const tags = filters.tags.map((tag) => tag.trim()).filter((tag) => tag !== '');
  if (tags.length > 0) query.tag = tags;
  if (filters.type !== '') query.type = filters.type;
  if (filters.status !== '') query.status = filters.status;
  return query;
}
