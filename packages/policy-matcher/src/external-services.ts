// External services a proxy may reach directly: those whose most specific TrafficPermission
// (chosen by the external service's tags) has a source matching the proxy.
import { type IndexedPolicy, type PolicyIndex } from './policy-index.js';
import { type ProxyView, proxyMatches } from './proxy.js';
import { selectForTags } from './select.js';
import type { ExternalServiceResource, PolicyOf } from './snapshot.js';

export interface PermittedExternalService {
  readonly externalService: ExternalServiceResource;
  readonly trafficPermission: PolicyOf<'TrafficPermission'>;
}

type Permission = { externalService: ExternalServiceResource; entry: IndexedPolicy<'TrafficPermission'> };

// The permission of each external service does not depend on the proxy: one pass per index.
const permissionsByIndex = new WeakMap<PolicyIndex, Permission[]>();

function permissionsOf(index: PolicyIndex): Permission[] {
  let permissions = permissionsByIndex.get(index);
  if (permissions === undefined) {
    const trafficPermissions = index.kind('TrafficPermission');
    permissions = (index.snapshot.externalServices ?? []).flatMap((externalService) => {
      const entry = selectForTags(trafficPermissions, externalService.spec.tags ?? {});
      return entry ? [{ externalService, entry }] : [];
    });
    permissionsByIndex.set(index, permissions);
  }
  return permissions;
}

export function permittedExternalServices(index: PolicyIndex, proxy: ProxyView): PermittedExternalService[] {
  return permissionsOf(index)
    .filter(({ entry }) => entry.sources.some((source) => proxyMatches(proxy, source)))
    .map(({ externalService, entry }) => ({ externalService, trafficPermission: entry.policy }));
}
