import { invalidResource, meshKind, type Violation } from '@mesh/model';
import { mtlsOf, secretsUsedBy } from './ca.js';
import type { KindHooks, Spec } from './hooks.js';

export const secretHooks: KindHooks = {
  /** A secret an mTLS backend of its mesh reads cannot go (docs/api.md, Meshes). */
  async beforeDelete(ctx, current) {
    if (ctx.mode === 'zone') return;
    const mesh = await ctx.store.get({ type: meshKind.name, mesh: '', name: current.mesh });
    if (!mesh) return;
    const violations: Violation[] = [];
    for (const backend of mtlsOf(JSON.parse(mesh.spec) as Spec).backends ?? []) {
      if (!secretsUsedBy(current.mesh, backend).includes(current.name)) continue;
      const b = backend.name ?? '';
      violations.push({
        field: 'name',
        message: `The secret "${current.name}" that you are trying to remove is currently in use in Mesh "${current.mesh}" in mTLS backend "${b}". Please remove the reference from the "${b}" backend before removing the secret.`,
      });
    }
    if (violations.length > 0) throw invalidResource(violations);
  },
};
