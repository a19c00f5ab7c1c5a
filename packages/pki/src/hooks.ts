// What the write path does for the CAs of meshes: a mesh's mTLS backends are checked and its
// builtin CAs generated before it is stored, and a secret a backend reads stays.
import { invalidResource, meshKind, secretKind, type Violation } from '@mesh/model';
import type { KindHooks, ManagerContext, ResourceManager, Spec } from '@mesh/resource-manager';
import { builtinCaSecrets, checkCaChange, mtlsOf, secretsUsedBy, validateMtlsBackends } from './ca.js';

async function checkMtls(ctx: ManagerContext, mesh: string, spec: Spec): Promise<void> {
  const violations = await validateMtlsBackends(ctx, mesh, mtlsOf(spec));
  if (violations.length > 0) throw invalidResource(violations);
}

const meshCaHooks: KindHooks = {
  async beforeCreate(ctx, key, spec) {
    await checkMtls(ctx, key.name, spec);
    return spec;
  },
  async beforeUpdate(ctx, key, spec, current) {
    checkCaChange(mtlsOf(JSON.parse(current.spec) as Spec), mtlsOf(spec));
    await checkMtls(ctx, key.name, spec);
    return spec;
  },
  /** The CA of each builtin backend, in the same write as the mesh. */
  owned: (ctx, key, spec) => builtinCaSecrets(ctx, key.name, mtlsOf(spec)),
};

const secretCaHooks: KindHooks = {
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

/** Registers the CA rules of meshes and secrets with the write path, in every mode. */
export function registerCaHooks(manager: ResourceManager): void {
  manager.registerHooks(meshKind, meshCaHooks);
  manager.registerHooks(secretKind, secretCaHooks);
}
