// The policy kinds the API serves (`GET /policies`) and the requests of the policy pages. The
// OpenAPI document has one path per kind (`/meshes/{mesh}/meshtimeouts`, ...); the pages choose
// the kind at run time, from the catalogue, so these requests name the path of a kind as one of
// those the document describes.
import type { ApiClient, Schemas } from '../../api/client.js';
import { dataOf } from '../../api/client.js';
import type { paths } from '../../api/schema.js';

export type PolicyKind = Schemas['PolicyCatalogue']['policies'][number];

/** The top-level targetRef of a policy: what it selects. */
export interface TargetRef {
  kind?: string;
  name?: string;
  tags?: Record<string, string>;
  mesh?: string;
}

/** A policy as the API answers it: the fields the pages read, the rest as it is. */
export interface Policy {
  type: string;
  mesh: string;
  name: string;
  creationTime: string;
  modificationTime: string;
  labels?: Record<string, string>;
  spec?: { targetRef?: TargetRef };
  [field: string]: unknown;
}

/** The kinds with targetRef apart from the older ones, each by name. */
export function groupKinds(kinds: readonly PolicyKind[]): { targetRef: PolicyKind[]; older: PolicyKind[] } {
  const sorted = [...kinds].sort((a, b) => a.name.localeCompare(b.name));
  return { targetRef: sorted.filter((kind) => kind.isTargetRefBased), older: sorted.filter((kind) => !kind.isTargetRefBased) };
}

/** A targetRef in a line: its kind, then the name and tags it names (`MeshService web`). */
export function describeTargetRef(targetRef: TargetRef | undefined): string {
  if (!targetRef?.kind) return '—';
  const tags = Object.entries(targetRef.tags ?? {}).map(([key, value]) => `${key}=${value}`);
  return [targetRef.kind, targetRef.name, ...tags].filter((part) => part !== undefined && part !== '').join(' ');
}

type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
type ListPath = Extract<GetPath, '/meshes/{mesh}/meshtimeouts'>;
type ItemPath = Extract<GetPath, '/meshes/{mesh}/meshtimeouts/{name}'>;
type DataplanesPath = Extract<GetPath, '/meshes/{mesh}/meshtimeouts/{name}/dataplanes'>;

// Every kind's paths answer the same shapes as MeshTimeout's (a list, a resource, the proxies it
// affects), so one kind's types stand for all; the answers are read as `Policy`.
const listPath = (kind: PolicyKind) => `/meshes/{mesh}/${kind.path}` as ListPath;
const itemPath = (kind: PolicyKind) => `/meshes/{mesh}/${kind.path}/{name}` as ItemPath;
const dataplanesPath = (kind: PolicyKind) => `/meshes/{mesh}/${kind.path}/{name}/dataplanes` as DataplanesPath;

export async function policyKinds(api: ApiClient): Promise<PolicyKind[]> {
  return dataOf(await api.GET('/policies')).policies;
}

/** Every policy of a kind in a mesh, following the pages of the list. */
export async function listPolicies(api: ApiClient, mesh: string, kind: PolicyKind): Promise<Policy[]> {
  const policies: Policy[] = [];
  let offset: string | undefined;
  do {
    const page = dataOf(await api.GET(listPath(kind), { params: { path: { mesh }, query: { size: '1000', ...(offset ? { offset } : {}) } } }));
    policies.push(...(page.items as Policy[]));
    offset = page.next ? (new URL(page.next, 'http://api.invalid').searchParams.get('offset') ?? undefined) : undefined;
  } while (offset);
  return policies;
}

export async function getPolicy(api: ApiClient, mesh: string, kind: PolicyKind, name: string): Promise<Policy> {
  return dataOf(await api.GET(itemPath(kind), { params: { path: { mesh, name } } })) as Policy;
}

export async function policyDataplanes(api: ApiClient, mesh: string, kind: PolicyKind, name: string): Promise<Schemas['PolicyDataplanes']> {
  return dataOf(await api.GET(dataplanesPath(kind), { params: { path: { mesh, name } } }));
}
