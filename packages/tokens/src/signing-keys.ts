// Signing keys of the four token kinds, stored as secrets under the reference's names
// (docs/tokens.md): `<prefix>-<serial>`, the highest serial signs, every serial verifies.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { globalSecretKind, meshKind, secretKind, type AnyKind } from '@mesh/model';
import { generateSigningKeyData } from '@mesh/pki';
import type { ResourceManager } from '@mesh/resource-manager';
import type { NewResource, ResourceReader, StoredResource } from '@mesh/store';

export type TokenKind = 'dataplane' | 'zoneIngress' | 'zone' | 'user';

/** Where a token kind's keys and revocation list live; dataplane tokens have them per mesh. */
export interface KeyPlace {
  kind: AnyKind;
  mesh: string;
  prefix: string;
  revocations: string;
  /** Where a zone keeps the public keys the global synced to it (zone tokens only). */
  publicPrefix?: string;
}

export function keyPlace(token: TokenKind, mesh = ''): KeyPlace {
  switch (token) {
    case 'dataplane':
      return { kind: secretKind, mesh, prefix: `dataplane-token-signing-key-${mesh}`, revocations: `dataplane-token-revocations-${mesh}` };
    case 'zoneIngress':
      return { kind: globalSecretKind, mesh: '', prefix: 'zone-ingress-token-signing-key', revocations: 'zone-ingress-token-revocations' };
    case 'zone':
      return { kind: globalSecretKind, mesh: '', prefix: 'zone-token-signing-key', revocations: 'zone-token-revocations', publicPrefix: ZONE_TOKEN_PUBLIC_KEY_PREFIX };
    case 'user':
      return { kind: globalSecretKind, mesh: '', prefix: 'user-token-signing-key', revocations: 'user-token-revocations' };
  }
}

/** A zone holds the global's zone-token keys as public keys under this prefix (docs/multizone.md). */
export const ZONE_TOKEN_PUBLIC_KEY_PREFIX = 'zone-token-signing-public-key';

/** The secret's name for a serial; serial 0 is the bare prefix (legacy keys). */
export const keyName = (place: KeyPlace, serial: number): string => (serial === 0 ? place.prefix : `${place.prefix}-${serial}`);

/** The secret that would hold a key, as the reference names it in its error message. */
export function missingKeyMessage(place: KeyPlace, serial: number): string {
  const where = place.kind === secretKind ? `Secret of name "${keyName(place, serial)}" in mesh "${place.mesh}"` : `GlobalSecret of name "${keyName(place, serial)}"`;
  return `there is no signing key with KID ${serial}. ${where} is not found. If signing key was rotated, regenerate the token`;
}

const dataOf = (secret: StoredResource): Buffer => Buffer.from((JSON.parse(secret.spec) as { data?: string }).data ?? '', 'base64');

/** A key from its secret: PEM (PKCS#1 or PKCS#8) or, as legacy, raw PKCS#1 DER. */
function privateKeyOf(secret: StoredResource): KeyObject {
  const data = dataOf(secret);
  const text = data.toString('utf8');
  return text.includes('-----BEGIN') ? createPrivateKey(text) : createPrivateKey({ key: data, format: 'der', type: 'pkcs1' });
}

/**
 * Parsed keys by the stored secret they come from: parsing costs milliseconds and every proxy
 * stream verifies a token; a changed secret is a new stored object, parsed again.
 */
const publicKeys = new WeakMap<StoredResource, KeyObject>();

function publicKeyOf(secret: StoredResource, parse: () => KeyObject): KeyObject {
  let key = publicKeys.get(secret);
  if (!key) {
    key = parse();
    publicKeys.set(secret, key);
  }
  return key;
}

export interface SigningKey {
  serial: number;
  privateKey: KeyObject;
}

/** Reads signing keys and revocation lists from the store (in memory: reads cost no query). */
export class SigningKeys {
  constructor(private readonly store: ResourceReader) {}

  /** The key with the highest serial, which signs new tokens. */
  async current(place: KeyPlace): Promise<SigningKey | undefined> {
    const { items } = await this.store.list({ type: place.kind.name, ...(place.kind === secretKind ? { mesh: place.mesh } : {}), offset: 0, size: 0 });
    let best: { serial: number; secret: StoredResource } | undefined;
    for (const secret of items) {
      const serial = serialOf(place, secret.name);
      if (serial !== undefined && (!best || serial > best.serial)) best = { serial, secret };
    }
    return best && { serial: best.serial, privateKey: privateKeyOf(best.secret) };
  }

  /** The public key of one serial, to verify tokens it signed: from the private key, or the public one a zone was sent. */
  async publicKey(place: KeyPlace, serial: number): Promise<KeyObject | undefined> {
    const mesh = place.kind === secretKind ? place.mesh : '';
    const secret = await this.store.get({ type: place.kind.name, mesh, name: keyName(place, serial) });
    if (secret) return publicKeyOf(secret, () => createPublicKey(privateKeyOf(secret)));
    if (!place.publicPrefix) return undefined;
    const published = await this.store.get({ type: place.kind.name, mesh, name: keyName({ ...place, prefix: place.publicPrefix }, serial) });
    return published && publicKeyOf(published, () => createPublicKey(dataOf(published).toString('utf8')));
  }

  /** Token ids revoked for this kind: the list's data, comma-separated. */
  async revoked(place: KeyPlace): Promise<ReadonlySet<string>> {
    const secret = await this.store.get({ type: place.kind.name, mesh: place.kind === secretKind ? place.mesh : '', name: place.revocations });
    if (!secret) return new Set();
    return new Set(dataOf(secret).toString('utf8').trim().split(',').map((id) => id.trim()).filter((id) => id !== ''));
  }

  /** Creates serial 1 unless the kind has a key, through the one write path. */
  async ensure(manager: ResourceManager, place: KeyPlace): Promise<boolean> {
    if (await this.current(place)) return false;
    const name = keyName(place, 1);
    const body = { type: place.kind.name, ...(place.kind === secretKind ? { mesh: place.mesh } : {}), name, data: await generateSigningKeyData() };
    await manager.apply(place.kind, { mesh: place.mesh, name }, body);
    return true;
  }
}

/**
 * Registers with the write path that a mesh is created with serial 1 of its dataplane-token
 * signing key, in the same write (docs/tokens.md). Zones receive meshes with their keys from the
 * global and create none.
 */
export function registerSigningKeyHooks(manager: ResourceManager): void {
  manager.registerHooks(meshKind, {
    async owned(ctx, key, _spec, current): Promise<NewResource[]> {
      if (current || ctx.mode === 'zone') return [];
      const place = keyPlace('dataplane', key.name);
      const name = keyName(place, 1);
      if (await ctx.store.get({ type: place.kind.name, mesh: place.mesh, name })) return [];
      return [{ type: place.kind.name, mesh: place.mesh, name, spec: JSON.stringify({ data: await generateSigningKeyData() }) }];
    },
  });
}

function serialOf(place: KeyPlace, name: string): number | undefined {
  if (name === place.prefix) return 0;
  if (!name.startsWith(`${place.prefix}-`)) return undefined;
  const rest = name.slice(place.prefix.length + 1);
  return /^\d+$/.test(rest) ? Number(rest) : undefined;
}
