import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { dataplaneKind, invalidResource, secretKind } from '@mesh/model';
import type { NewResource } from '@mesh/store';
import { builtinCaSecrets, checkCaChange, mtlsOf, validateMtlsBackends } from './ca.js';
import type { KindHooks, ManagerContext, Spec } from './hooks.js';
import { defaultPolicies, signingKeySecretName } from './mesh-defaults.js';

const generateRsaKeyPair = promisify(generateKeyPair);

/** A new 2048-bit RSA token signing key as PKCS#1 PEM, base64 as a secret's `data` (docs/tokens.md). */
export async function generateSigningKeyData(): Promise<string> {
  const { privateKey } = await generateRsaKeyPair('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return Buffer.from(privateKey).toString('base64');
}

async function signingKeySecret(ctx: ManagerContext, mesh: string): Promise<NewResource[]> {
  const name = signingKeySecretName(mesh);
  if (await ctx.store.get({ type: secretKind.name, mesh, name })) return [];
  return [{ type: secretKind.name, mesh, name, spec: JSON.stringify({ data: await generateSigningKeyData() }) }];
}

async function checkMtls(ctx: ManagerContext, mesh: string, spec: Spec): Promise<void> {
  const violations = await validateMtlsBackends(ctx, mesh, mtlsOf(spec));
  if (violations.length > 0) throw invalidResource(violations);
}

/** Zones receive meshes from the global, with their secrets and policies; they create none. */
const writesDefaults = (ctx: ManagerContext) => ctx.mode !== 'zone';

export const meshHooks: KindHooks = {
  async beforeCreate(ctx, key, spec) {
    await checkMtls(ctx, key.name, spec);
    return spec;
  },
  async beforeUpdate(ctx, key, spec, current) {
    checkCaChange(mtlsOf(JSON.parse(current.spec) as Spec), mtlsOf(spec));
    await checkMtls(ctx, key.name, spec);
    return spec;
  },
  /** The CA of a builtin backend; on create also the token signing key and the default policies. */
  async owned(ctx, key, spec, current) {
    const mesh = key.name;
    const owned = [...(await builtinCaSecrets(ctx, mesh, mtlsOf(spec)))];
    if (!current && writesDefaults(ctx)) {
      owned.push(...(await signingKeySecret(ctx, mesh)));
      owned.push(...defaultPolicies(mesh, (spec.skipCreatingInitialPolicies as string[] | undefined) ?? []));
    }
    return owned;
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
