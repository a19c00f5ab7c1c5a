import { checkDataplaneConstraints, invalidResource, meshKind, ZONE_TAG } from '@mesh/model';
import type { ResourceKey } from '@mesh/store';
import type { KindHooks, ManagerContext, Spec } from './hooks.js';

type Inbound = { tags?: Record<string, string>; serviceProbe?: unknown; health?: unknown };
type Networking = { inbound?: Inbound[]; gateway?: { tags?: Record<string, string> } };

/** On a zone, every inbound and gateway is tagged with the zone; probed inbounds start unready. */
function withZoneDefaults(ctx: ManagerContext, spec: Spec): Spec {
  const networking = spec.networking as Networking | undefined;
  if (!networking) return spec;
  const zone = ctx.mode === 'zone' ? ctx.zoneName : undefined;
  const tagged = (tags: Record<string, string> | undefined) => (zone ? { ...tags, [ZONE_TAG]: zone } : tags);
  const inbound = networking.inbound?.map((i) => ({
    ...i,
    tags: tagged(i.tags),
    ...(i.serviceProbe !== undefined && i.health === undefined ? { health: { ready: false } } : {}),
  }));
  const gateway = networking.gateway ? { ...networking.gateway, tags: tagged(networking.gateway.tags) } : undefined;
  return {
    ...spec,
    networking: { ...networking, ...(inbound ? { inbound } : {}), ...(gateway ? { gateway } : {}) },
  };
}

/** The mesh's `constraints.dataplaneProxy` decide which proxies may join (400, not the reference's 500). */
async function checkMembership(ctx: ManagerContext, key: ResourceKey, spec: Spec): Promise<Spec> {
  const defaulted = withZoneDefaults(ctx, spec);
  const mesh = await ctx.store.get({ type: meshKind.name, mesh: '', name: key.mesh });
  const constraints = mesh ? (JSON.parse(mesh.spec) as { constraints?: Parameters<typeof checkDataplaneConstraints>[2] }).constraints : undefined;
  if (constraints) {
    const violations = checkDataplaneConstraints(key.mesh, defaulted, constraints);
    if (violations.length > 0) throw invalidResource(violations);
  }
  return defaulted;
}

export const dataplaneHooks: KindHooks = {
  beforeCreate: checkMembership,
  beforeUpdate: (ctx, key, spec) => checkMembership(ctx, key, spec),
};
