// Issuing and verifying the control plane's JWTs (docs/tokens.md): RS256, the signing key's
// serial as `kid`, capitalised custom claims, `jti`/`iat`/`nbf`/`exp`; revocation by `jti`.
import { type KeyObject, randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { keyPlace, missingKeyMessage, SigningKeys, type KeyPlace, type TokenKind } from './signing-keys.js';

/** The reference backdates `nbf` by five minutes, for clocks a little behind. */
const NOT_BEFORE_SKEW_SECONDS = 300;

export interface DataplaneClaims {
  name: string;
  mesh: string;
  tags: Record<string, string[]>;
  type: string;
}
export interface ZoneClaims {
  zone: string;
  scope: string[];
}
export interface UserClaims {
  name: string;
  groups: string[];
}

/** A token cannot be issued: no signing key for it (the reference's 404 `Signing Key not found`). */
export class SigningKeyNotFound extends Error {}

/**
 * The `Type` claims of a dataplane token that a dataplane proxy may present: empty or `dataplane`.
 * `ingress` and `egress` name the zone proxies (the legacy zone-ingress tokens were dataplane
 * tokens of type `ingress`), which authenticate with zone tokens instead (docs/tokens.md).
 */
const DATAPLANE_PROXY_TOKEN_TYPES: ReadonlySet<string> = new Set(['', 'dataplane']);

/**
 * Which kind of token this is, by its claims alone and before any check, so a proxy presenting
 * another kind than it needs can be told so: zone tokens carry `Scope`, user tokens `Groups`,
 * dataplane tokens `Mesh`, `Tags` and `Type`, zone-ingress tokens only `Zone`. Undefined for what
 * is not a JWT or has none of these.
 */
export function tokenKindOf(token: string): TokenKind | undefined {
  let claims: JWTPayload;
  try {
    claims = decodeJwt(token);
  } catch {
    return undefined;
  }
  if ('Scope' in claims) return 'zone';
  if ('Groups' in claims) return 'user';
  if ('Mesh' in claims || 'Tags' in claims || 'Type' in claims) return 'dataplane';
  if ('Zone' in claims) return 'zoneIngress';
  return undefined;
}

/** A token did not verify; `reason` says why, for logs and for the caller. */
export type Verification<T> = { ok: true; claims: T } | { ok: false; reason: string };

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * Tokens whose signature a key verified, with their claims: proxies present the same token on
 * every stream and at every re-check, and an RSA verification costs far more than this lookup.
 * Kept per key object, so a rotated or removed key takes its entries with it. Bounded: a full map
 * starts again empty (evicting from a Map's front one at a time slows as deleted slots pile up).
 */
const verifiedByKey = new WeakMap<KeyObject, Map<string, JWTPayload>>();
const VERIFIED_PER_KEY_LIMIT = 20_000;

/** Whether claims verified earlier still hold at `now` for the time checks (`exp`, `nbf`). */
const stillInTime = (payload: JWTPayload, now: number): boolean =>
  (typeof payload.exp !== 'number' || payload.exp > now) && (typeof payload.nbf !== 'number' || payload.nbf <= now);

/** A text claim: an absent one is empty, one of another JSON type reads as its JSON. */
function claimText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

function rememberVerified(key: KeyObject, jwt: string, payload: JWTPayload): void {
  let verified = verifiedByKey.get(key);
  if (!verified) verifiedByKey.set(key, (verified = new Map<string, JWTPayload>()));
  if (verified.size >= VERIFIED_PER_KEY_LIMIT) verified.clear();
  verified.set(jwt, payload);
}

export interface TokenServiceOptions {
  keys: SigningKeys;
  now?: () => Date;
}

export class TokenService {
  private readonly keys: SigningKeys;
  private readonly now: () => Date;

  constructor(options: TokenServiceOptions) {
    this.keys = options.keys;
    this.now = options.now ?? (() => new Date());
  }

  issueDataplaneToken(claims: DataplaneClaims, validForSeconds: number): Promise<string> {
    return this.issue(keyPlace('dataplane', claims.mesh), { Name: claims.name, Mesh: claims.mesh, Tags: claims.tags, Type: claims.type }, validForSeconds);
  }

  issueZoneIngressToken(zone: string, validForSeconds: number): Promise<string> {
    return this.issue(keyPlace('zoneIngress'), { Zone: zone }, validForSeconds);
  }

  issueZoneToken(claims: ZoneClaims, validForSeconds: number): Promise<string> {
    return this.issue(keyPlace('zone'), { Zone: claims.zone, Scope: claims.scope }, validForSeconds);
  }

  issueUserToken(claims: UserClaims, validForSeconds: number): Promise<string> {
    return this.issue(keyPlace('user'), { Name: claims.name, Groups: claims.groups }, validForSeconds);
  }

  /** A user token: the API caller it names, with `mesh-system:authenticated` among its groups. */
  async verifyUserToken(token: string): Promise<Verification<UserClaims>> {
    const verified = await this.verify('user', keyPlace('user'), token);
    if (!verified.ok) return verified;
    const groups = Array.isArray(verified.payload.Groups) ? verified.payload.Groups.filter((g): g is string => typeof g === 'string') : [];
    return { ok: true, claims: { name: claimText(verified.payload.Name), groups } };
  }

  /**
   * A dataplane proxy's token, checked against the proxy it is presented for: its type must be a
   * dataplane's, a name or mesh in the token must be the proxy's, and every tag it names must be
   * on the proxy with only the values it allows.
   */
  async verifyDataplaneToken(token: string, proxy: { mesh: string; name: string; tags: Record<string, string[]> }): Promise<Verification<DataplaneClaims>> {
    const verified = await this.verify('dataplane', keyPlace('dataplane', proxy.mesh), token);
    if (!verified.ok) return verified;
    const claims: DataplaneClaims = {
      name: claimText(verified.payload.Name),
      mesh: claimText(verified.payload.Mesh),
      tags: (verified.payload.Tags as Record<string, string[]> | undefined) ?? {},
      type: claimText(verified.payload.Type),
    };
    if (!DATAPLANE_PROXY_TOKEN_TYPES.has(claims.type)) {
      return { ok: false, reason: `a dataplane token of type "${claims.type}" cannot authenticate a dataplane proxy; it takes a dataplane token of type "dataplane" or without a type` };
    }
    if (claims.name !== '' && claims.name !== proxy.name) return { ok: false, reason: `proxy name from requestor: ${proxy.name} is different than in token: ${claims.name}` };
    if (claims.mesh !== '' && claims.mesh !== proxy.mesh) return { ok: false, reason: `proxy mesh from requestor: ${proxy.mesh} is different than in token: ${claims.mesh}` };
    for (const [tag, allowed] of Object.entries(claims.tags)) {
      const values = proxy.tags[tag];
      if (!values || values.length === 0) return { ok: false, reason: `dataplane has no tag "${tag}" required by the token` };
      for (const value of values) {
        if (!allowed.includes(value)) {
          return { ok: false, reason: `dataplane contains tag "${tag}" with value "${value}" which is not allowed with this token. Allowed values in token are [${allowed.join(' ')}]` };
        }
      }
    }
    return { ok: true, claims };
  }

  /** A zone token (zone ingress or egress proxies of `zone`), with the scope it must carry. */
  async verifyZoneToken(token: string, zone: string, scope: 'ingress' | 'egress' | 'cp'): Promise<Verification<ZoneClaims>> {
    const verified = await this.verify('zone', keyPlace('zone'), token);
    if (!verified.ok) return verified;
    const claims: ZoneClaims = { zone: claimText(verified.payload.Zone), scope: Array.isArray(verified.payload.Scope) ? verified.payload.Scope.map(String) : [] };
    if (!claims.scope.includes(scope)) return { ok: false, reason: `token cannot be used to authenticate zone entity (${scope} is out of token's scope: [${claims.scope.join(' ')}])` };
    if (claims.zone !== '' && claims.zone !== zone) return { ok: false, reason: `zone from requestor: ${zone} is different than in token: ${claims.zone}` };
    return { ok: true, claims };
  }

  /** A legacy zone-ingress token of `zone`. */
  async verifyZoneIngressToken(token: string, zone: string): Promise<Verification<{ zone: string }>> {
    const verified = await this.verify('zoneIngress', keyPlace('zoneIngress'), token);
    if (!verified.ok) return verified;
    const tokenZone = claimText(verified.payload.Zone);
    if (tokenZone !== '' && tokenZone !== zone) return { ok: false, reason: `zone from requestor: ${zone} is different than in token: ${tokenZone}` };
    return { ok: true, claims: { zone: tokenZone } };
  }

  private async issue(place: KeyPlace, claims: Record<string, unknown>, validForSeconds: number): Promise<string> {
    const key = await this.keys.current(place);
    if (!key) throw new SigningKeyNotFound(missingKeyMessage(place, 1));
    const now = seconds(this.now());
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: String(key.serial), typ: 'JWT' })
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setNotBefore(now - NOT_BEFORE_SKEW_SECONDS)
      .setExpirationTime(now + validForSeconds)
      .sign(key.privateKey);
  }

  private async verify(token: TokenKind, place: KeyPlace, jwt: string): Promise<{ ok: true; payload: JWTPayload } | { ok: false; reason: string }> {
    let kid: number;
    try {
      const header = decodeProtectedHeader(jwt);
      if (header.alg !== 'RS256') return { ok: false, reason: `unsupported token alg ${String(header.alg)}. Allowed algorithms are RS256` };
      if (header.kid === undefined) {
        // Only dataplane and zone-ingress tokens predate `kid`: they fall back to the legacy key.
        if (token !== 'dataplane' && token !== 'zoneIngress') return { ok: false, reason: 'JWT token must have kid header' };
        kid = 0;
      } else {
        kid = /^\d+$/.test(header.kid) ? Number(header.kid) : -1;
      }
    } catch {
      return { ok: false, reason: 'could not parse the token' };
    }
    const key = kid >= 0 ? await this.keys.publicKey(place, kid) : undefined;
    if (!key) return { ok: false, reason: missingKeyMessage(place, Math.max(kid, 0)) };
    try {
      const now = seconds(this.now());
      let payload = verifiedByKey.get(key)?.get(jwt);
      if (!payload || !stillInTime(payload, now)) {
        // Out of its time window, the full check below says why.
        payload = (await jwtVerify(jwt, key, { algorithms: ['RS256'], currentDate: this.now() })).payload;
        rememberVerified(key, jwt, payload);
      }
      if (typeof payload.iat === 'number' && payload.iat > now) return { ok: false, reason: 'token used before issued' };
      if (payload.jti && (await this.keys.revoked(place)).has(payload.jti)) return { ok: false, reason: 'token is revoked' };
      return { ok: true, payload };
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { ok: false, reason: 'token is expired' };
      if (error instanceof errors.JWTClaimValidationFailed) return { ok: false, reason: `token is not valid: ${error.message}` };
      return { ok: false, reason: 'token signature is invalid' };
    }
  }
}
