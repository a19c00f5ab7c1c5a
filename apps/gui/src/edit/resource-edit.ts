// Creating, changing and deleting resources from the GUI (docs/gui.md, Editing): which kinds, the
// YAML a page starts from, the request the YAML makes, the API's errors at their lines, and
// whether this control plane takes the change at all.
import { ApiError, dataOf, type ApiClient, type Schemas } from '../api/client.js';
import type { paths } from '../api/schema.js';
import type { GuiConfig } from '../config.js';
import type { PolicyKind } from '../pages/policies/policy-kinds.js';
import type { SourceProblem } from './yaml-source.js';

/** A kind the GUI edits: every kind of the policy catalogue (external services among them) and Mesh. */
export interface EditableKind {
  name: string;
  /** Its segment in the API's paths and the GUI's (`meshtimeouts`, `external-services`). */
  path: string;
  singularDisplayName: string;
  pluralDisplayName: string;
  /** Resources of a mesh; a Mesh is not in one. */
  meshScoped: boolean;
  /** This control plane refuses its writes (its mode; for a policy kind, a read-only API too). */
  readOnly: boolean;
}

export const editableKind = (kind: PolicyKind): EditableKind => ({
  name: kind.name,
  path: kind.path,
  singularDisplayName: kind.singularDisplayName,
  pluralDisplayName: kind.pluralDisplayName,
  meshScoped: true,
  readOnly: kind.readOnly,
});

/** Meshes are global-owned like policies: a zone of a multizone deployment takes none. */
export const meshKind = (mode: GuiConfig['mode']): EditableKind => ({
  name: 'Mesh',
  path: 'meshes',
  singularDisplayName: 'Mesh',
  pluralDisplayName: 'Meshes',
  meshScoped: false,
  readOnly: mode === 'zone',
});

/** External services are global-owned too; the policy catalogue lists them as well. */
export const externalServiceKind = (mode: GuiConfig['mode']): EditableKind => ({
  name: 'ExternalService',
  path: 'external-services',
  singularDisplayName: 'External Service',
  pluralDisplayName: 'External Services',
  meshScoped: true,
  readOnly: mode === 'zone',
});

/** What the page creates (no name yet) or changes. */
export interface EditTarget {
  kind: EditableKind;
  /** The mesh of a mesh-scoped kind. */
  mesh?: string;
  /** The resource changed; undefined when creating. */
  name?: string;
}

/** Whether the caller may create, change and delete resources of a kind here, and if not why. */
export type WriteAccess = { allowed: true } | { allowed: false; reason: string };

/**
 * The API refuses a read-only API's writes and, on a zone of a multizone deployment, those of the
 * kinds the global owns. It lets every caller write these kinds (only secrets are for admins,
 * docs/tokens.md), so who is signed in changes nothing here; a refusal still shows when saving.
 */
export function writeAccess(kind: EditableKind, apiReadOnly: boolean, mode: GuiConfig['mode']): WriteAccess {
  if (apiReadOnly) return { allowed: false, reason: 'This control plane’s API is read-only (apiServer.readOnly): it accepts no change.' };
  if (!kind.readOnly) return { allowed: true };
  if (mode === 'zone') return { allowed: false, reason: `${kind.pluralDisplayName} are changed on the global control plane, which sends them to this zone.` };
  return { allowed: false, reason: `This control plane does not accept changes of ${kind.pluralDisplayName}.` };
}

/** The API path of one resource of the kind, as the OpenAPI document names it. */
export const apiPathTemplate = (kind: EditableKind): string => (kind.meshScoped ? `/meshes/{mesh}/${kind.path}/{name}` : '/meshes/{name}');

/** A PUT the YAML makes: the resource's key in the path, and the body. */
export interface WriteRequest {
  mesh?: string;
  name: string;
  body: Record<string, unknown>;
}

/**
 * The request the YAML's value makes, or what stops it. The URL says the kind, the mesh and, when
 * changing, the name: the YAML must say the same (`type`, `mesh`, `name`); creating takes the
 * name from the YAML.
 */
export function writeRequest(target: EditTarget, value: unknown): { ok: true; request: WriteRequest } | { ok: false; problems: SourceProblem[] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, problems: [{ line: 1, message: 'The YAML must be a mapping: the resource’s fields.' }] };
  const body = value as Record<string, unknown>;
  const problems: SourceProblem[] = [];
  if (body.type !== target.kind.name) problems.push({ field: 'type', message: `must be ${target.kind.name}` });
  if (target.kind.meshScoped && body.mesh !== target.mesh) problems.push({ field: 'mesh', message: `must be ${String(target.mesh)}, the mesh of this page` });
  const name = body.name;
  if (typeof name !== 'string' || name === '') problems.push({ field: 'name', message: 'must be the name of the resource' });
  else if (target.name !== undefined && name !== target.name) problems.push({ field: 'name', message: `must be ${target.name}: to rename, create a new one and delete this one` });
  if (problems.length > 0 || typeof name !== 'string') return { ok: false, problems };
  return { ok: true, request: { ...(target.kind.meshScoped ? { mesh: target.mesh } : {}), name, body } };
}

/** The problems an API error names: each violation at its field, else the error's detail. */
export function apiProblems(error: unknown): SourceProblem[] {
  if (!(error instanceof ApiError)) return [{ message: error instanceof Error ? error.message : String(error) }];
  const causes = error.body?.causes ?? [];
  if (causes.length === 0) return [{ message: error.body?.detail ?? error.message }];
  return causes.map((cause) => (cause.field === '' ? { message: cause.message } : { field: cause.field, message: cause.message }));
}

/** Places problems on the lines of their fields, in line order; those without a line first. */
export function locateProblems(problems: readonly SourceProblem[], locate: (field: string) => number | undefined): SourceProblem[] {
  const located = problems.map((problem) => {
    const line = problem.line ?? (problem.field !== undefined ? locate(problem.field) : undefined);
    return line === undefined ? problem : { ...problem, line };
  });
  return located.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

type ListPath = Extract<keyof paths, '/meshes/{mesh}/meshtimeouts'>;
type ItemPath = Extract<keyof paths, '/meshes/{mesh}/meshtimeouts/{name}'>;
type ItemBody = Schemas['MeshTimeoutBody'];
type MeshBody = Schemas['MeshBody'];

// Every kind's item path answers and takes what MeshTimeout's does, with its own body: one kind's
// types stand for all (as in policy-kinds.ts), and the API checks the body.
const listPath = (kind: EditableKind) => `/meshes/{mesh}/${kind.path}` as ListPath;
const itemPath = (kind: EditableKind) => `/meshes/{mesh}/${kind.path}/{name}` as ItemPath;

/** The stored resource as the API answers it. */
export async function getResource(api: ApiClient, target: EditTarget & { name: string }): Promise<Record<string, unknown>> {
  if (!target.kind.meshScoped) return dataOf(await api.GET('/meshes/{name}', { params: { path: { name: target.name } } }));
  return dataOf(await api.GET(itemPath(target.kind), { params: { path: { mesh: String(target.mesh), name: target.name } } }));
}

/**
 * Whether a resource of the kind has the name, so that creating does not overwrite it. Asked of
 * the list filtered by name, which answers 200 either way: a 404 would be a failed request in
 * the browser's console for what is only a check.
 */
export async function exists(api: ApiClient, target: EditTarget & { name: string }): Promise<boolean> {
  const query = { name: target.name, size: '1000' };
  const page = target.kind.meshScoped
    ? dataOf(await api.GET(listPath(target.kind), { params: { path: { mesh: String(target.mesh) }, query } }))
    : dataOf(await api.GET('/meshes', { params: { query } }));
  return page.items.some((item) => item.name === target.name);
}

export async function putResource(api: ApiClient, kind: EditableKind, request: WriteRequest): Promise<void> {
  if (!kind.meshScoped) {
    dataOf(await api.PUT('/meshes/{name}', { params: { path: { name: request.name } }, body: request.body as MeshBody }));
    return;
  }
  dataOf(await api.PUT(itemPath(kind), { params: { path: { mesh: String(request.mesh), name: request.name } }, body: request.body as ItemBody }));
}

export async function deleteResource(api: ApiClient, target: EditTarget & { name: string }): Promise<void> {
  if (!target.kind.meshScoped) {
    dataOf(await api.DELETE('/meshes/{name}', { params: { path: { name: target.name } } }));
    return;
  }
  dataOf(await api.DELETE(itemPath(target.kind), { params: { path: { mesh: String(target.mesh), name: target.name } } }));
}

/** Where a resource is shown: a policy's page, the mesh's page, or the services page for an external service. */
export function pageOf(kind: EditableKind, mesh: string | undefined, name: string) {
  if (!kind.meshScoped) return { name: 'mesh', params: { mesh: name } };
  if (kind.name === 'ExternalService') return { name: 'services', params: { mesh: String(mesh) } };
  return { name: 'policy', params: { mesh: String(mesh), kind: kind.path, name } };
}

/** The list a deleted resource was in. */
export function listOf(kind: EditableKind, mesh: string | undefined) {
  if (!kind.meshScoped) return { name: 'meshes' };
  return { name: kind.name === 'ExternalService' ? 'services' : 'policies', params: { mesh: String(mesh) } };
}
