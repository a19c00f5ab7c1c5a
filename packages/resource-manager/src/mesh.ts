import { dataplaneKind, invalidResource } from '@mesh/model';
import type { KindHooks } from './hooks.js';
import { defaultPolicies } from './mesh-defaults.js';

export const meshHooks: KindHooks = {
  /** On create, the default policies; zones receive meshes from the global with theirs. */
  owned(ctx, key, spec, current) {
    if (current || ctx.mode === 'zone') return Promise.resolve([]);
    return Promise.resolve(defaultPolicies(key.name, (spec.skipCreatingInitialPolicies as string[] | undefined) ?? []));
  },
  async beforeDelete(ctx, current) {
    if ((await ctx.store.count(dataplaneKind.name, current.name)) > 0) {
      throw invalidResource([{ field: 'mesh', message: 'unable to delete mesh, there are still some dataplanes attached' }]);
    }
  },
  async delete(ctx, key) {
    await ctx.store.deleteMesh(key.name);
  },
};
