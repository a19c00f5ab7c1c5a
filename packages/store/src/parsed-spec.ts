// A stored resource never changes (a write stores a new object), so its spec parsed once serves
// every reader in the process: the insights, the virtual IPs and the proxies' configurations all
// read each dataplane written (docs/architecture.md, The path of a write).
import type { StoredResource } from './store.js';

const parsedSpecs = new WeakMap<StoredResource, unknown>();

/** The resource's spec parsed from its JSON, once while the resource lives: shared, so never modify it. */
export function parsedSpec<Spec>(resource: StoredResource): Spec {
  let spec = parsedSpecs.get(resource);
  if (spec === undefined) parsedSpecs.set(resource, (spec = JSON.parse(resource.spec)));
  return spec as Spec;
}
