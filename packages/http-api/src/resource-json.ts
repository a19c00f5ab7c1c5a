// Resources on the wire, assembled from the stored JSON text without a parse/stringify round trip.
import type { AnyKind } from '@mesh/model';
import type { StoredResource } from '@mesh/store';

// Stored resources are immutable and shared, so each one's wire JSON is built once.
const wireJsonOf = new WeakMap<StoredResource, string>();

/**
 * `{type, mesh?, name, creationTime, modificationTime, labels?, ...spec}` in the reference's key
 * order; a kind whose spec travels under a key (`spec`, the targetRef policies) ends with it there.
 */
export function resourceJson(kind: AnyKind, resource: StoredResource): string {
  let json = wireJsonOf.get(resource);
  if (json === undefined) {
    json = buildResourceJson(kind, resource);
    wireJsonOf.set(resource, json);
  }
  return json;
}

function buildResourceJson(kind: AnyKind, resource: StoredResource): string {
  let json = `{"type":${JSON.stringify(kind.wireType)}`;
  if (kind.scope === 'mesh') json += `,"mesh":${JSON.stringify(resource.mesh)}`;
  json += `,"name":${JSON.stringify(resource.name)},"creationTime":"${resource.creationTime}","modificationTime":"${resource.modificationTime}"`;
  if (Object.keys(resource.labels).length > 0) json += `,"labels":${JSON.stringify(resource.labels)}`;
  if (kind.specField !== undefined) return `${json},${JSON.stringify(kind.specField)}:${resource.spec}}`;
  return resource.spec === '{}' ? `${json}}` : `${json},${resource.spec.slice(1)}`;
}

/** The Kubernetes-style rendering (`?format=k8s`): the spec under `spec`, meta under `metadata`. */
export function kubernetesResourceJson(kind: AnyKind, resource: StoredResource): string {
  const metadata = {
    name: resource.name,
    creationTimestamp: resource.creationTime,
    ...(Object.keys(resource.labels).length > 0 ? { labels: resource.labels } : {}),
  };
  const mesh = kind.scope === 'mesh' ? `"mesh":${JSON.stringify(resource.mesh)},` : '';
  return `{"apiVersion":"mesh.io/v1alpha1","kind":${JSON.stringify(kind.name)},${mesh}"metadata":${JSON.stringify(metadata)},"spec":${resource.spec}}`;
}
