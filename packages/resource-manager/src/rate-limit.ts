// A RateLimit that reaches an external service may select it by service tag only: the proxy
// applies such limits per external cluster (docs/api.md, Kinds).
import { externalServiceKind, invalidResource, rateLimitKind, SERVICE_TAG, type Violation } from '@mesh/model';
import type { KindHooks, ManagerContext, Spec } from './hooks.js';

type Destination = { match?: Record<string, string> };

async function listSpecs(ctx: ManagerContext, type: string, mesh: string): Promise<Array<{ name: string; spec: Spec }>> {
  const page = await ctx.store.list({ type, mesh, offset: 0, size: 0 });
  return page.items.map((r) => ({ name: r.name, spec: JSON.parse(r.spec) as Spec }));
}

/** True when a destination picks `isExternal` services and also other tags. */
function mixesServiceWithOtherTags(destination: Destination, isExternal: (service: string) => boolean): boolean {
  let selectsExternal = false;
  let hasOtherTags = false;
  for (const [tag, value] of Object.entries(destination.match ?? {})) {
    if (tag === SERVICE_TAG) selectsExternal ||= value === '*' || isExternal(value);
    else hasOtherTags = true;
  }
  return selectsExternal && hasOtherTags;
}

const destinationsOf = (spec: Spec) => (spec.destinations as Destination[] | undefined) ?? [];

async function checkRateLimit(ctx: ManagerContext, mesh: string, spec: Spec): Promise<Spec> {
  const services = new Set(
    (await listSpecs(ctx, externalServiceKind.name, mesh))
      .map(({ spec: es }) => (es.tags as Record<string, string> | undefined)?.[SERVICE_TAG])
      .filter((s): s is string => s !== undefined),
  );
  if (services.size === 0) return spec;
  const violations: Violation[] = destinationsOf(spec)
    .filter((d) => mixesServiceWithOtherTags(d, (s) => services.has(s)))
    .map(() => ({ field: 'ratelimit', message: `RateLimit applied to external service only supports ${SERVICE_TAG} as destination match` }));
  if (violations.length > 0) throw invalidResource(violations);
  return spec;
}

async function checkExternalService(ctx: ManagerContext, mesh: string, spec: Spec): Promise<Spec> {
  const service = (spec.tags as Record<string, string> | undefined)?.[SERVICE_TAG];
  const violations: Violation[] = [];
  for (const rateLimit of await listSpecs(ctx, rateLimitKind.name, mesh)) {
    for (const destination of destinationsOf(rateLimit.spec)) {
      if (mixesServiceWithOtherTags(destination, (s) => s === service)) {
        violations.push({
          field: 'externalservice',
          message: `ExternalService would match RateLimit '${rateLimit.name}' which includes incompatible destination matches`,
        });
      }
    }
  }
  if (violations.length > 0) throw invalidResource(violations);
  return spec;
}

export const rateLimitHooks: KindHooks = {
  beforeCreate: (ctx, key, spec) => checkRateLimit(ctx, key.mesh, spec),
  beforeUpdate: (ctx, key, spec) => checkRateLimit(ctx, key.mesh, spec),
};

export const externalServiceHooks: KindHooks = {
  beforeCreate: (ctx, key, spec) => checkExternalService(ctx, key.mesh, spec),
  beforeUpdate: (ctx, key, spec) => checkExternalService(ctx, key.mesh, spec),
};
