// What a control plane creates for tokens on start (docs/tokens.md): the signing keys it issues
// with, and the admin user token the command-line client reads from localhost.
import { globalSecretKind, type Mode } from '@mesh/model';
import type { ResourceManager } from '@mesh/resource-manager';
import { keyPlace, type SigningKeys } from './signing-keys.js';
import type { TokenService } from './tokens.js';

export const ADMIN_TOKEN_SECRET = 'admin-user-token';
const ADMIN_TOKEN_VALID_FOR_SECONDS = 87_600 * 3600;

export interface TokenBootstrapOptions {
  manager: ResourceManager;
  keys: SigningKeys;
  tokens: TokenService;
  mode: Mode;
  /** `apiServer.authn.tokens.bootstrapAdminToken`. */
  bootstrapAdminToken: boolean;
}

/**
 * Creates the user-token signing key (every mode), the zone-ingress and zone token keys (where
 * zone tokens are issued: standalone and global), and GlobalSecret `admin-user-token`. Meshes
 * get their dataplane keys when they are created (`registerSigningKeyHooks`).
 */
export async function bootstrapTokens(options: TokenBootstrapOptions): Promise<void> {
  const { manager, keys, mode } = options;
  await keys.ensure(manager, keyPlace('user'));
  if (mode !== 'zone') {
    await keys.ensure(manager, keyPlace('zoneIngress'));
    await keys.ensure(manager, keyPlace('zone'));
  }
  if (!options.bootstrapAdminToken || (await manager.get(globalSecretKind, '', ADMIN_TOKEN_SECRET))) return;
  const token = await options.tokens.issueUserToken({ name: 'mesh-system:admin', groups: ['mesh-system:admin'] }, ADMIN_TOKEN_VALID_FOR_SECONDS);
  await manager.apply(globalSecretKind, { mesh: '', name: ADMIN_TOKEN_SECRET }, { type: globalSecretKind.name, name: ADMIN_TOKEN_SECRET, data: Buffer.from(token).toString('base64') });
}
