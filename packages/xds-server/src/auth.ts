// Proxy authentication (docs/xds.md, Authentication): a dataplane presents its dataplane token, a
// zone ingress or egress its zone token, as the single `authorization` gRPC metadata value (the raw
// token, no `Bearer`). Failures carry the reference's messages and close the stream; a token of
// another kind than the proxy needs is refused with a message saying which one it needs.
import { dataplaneTagSets, type DataplaneSpec } from '@mesh/model';
import { tokenKindOf, type TokenKind, type TokenService } from '@mesh/tokens';
import type { ProxyType } from './proxy-node.js';
import { StreamRefusal } from './proxy-node.js';

/** `dpServer.authn.dpProxy.type` / `zoneProxy.type`: `none` turns the check off. */
export type AuthnType = 'dpToken' | 'zoneToken' | 'none';

export interface AuthenticatorOptions {
  tokens: TokenService;
  dataplanes: AuthnType;
  zoneProxies: AuthnType;
  /** This control plane's zone (zone tokens name it); empty on a standalone control plane. */
  zone: string;
}

/** The `authorization` values of a stream's metadata: exactly one is allowed, none reads as empty. */
export function credentialOf(values: readonly unknown[]): string {
  if (values.length > 1) {
    throw new StreamRefusal(`could not extract credential from DiscoveryRequest: request must have exactly 1 "authorization" header, got ${values.length}`);
  }
  const value = values[0];
  return typeof value === 'string' ? value.trim() : Buffer.isBuffer(value) ? value.toString('utf8').trim() : '';
}

/** Every value of each tag over the dataplane's inbounds (or gateway), as tokens bound to tags check them. */
export function tagValuesOf(spec: DataplaneSpec): Record<string, string[]> {
  const values: Record<string, Set<string>> = {};
  for (const tags of dataplaneTagSets(spec)) {
    for (const [tag, value] of Object.entries(tags)) (values[tag] ??= new Set()).add(value);
  }
  return Object.fromEntries(Object.entries(values).map(([tag, set]) => [tag, [...set].sort()]));
}

const TOKEN_NAMES: Readonly<Record<TokenKind, string>> = { dataplane: 'a dataplane token', zoneIngress: 'a zone-ingress token', zone: 'a zone token', user: 'a user token' };
const PROXY_NAMES: Readonly<Record<ProxyType, string>> = { dataplane: 'a dataplane proxy', ingress: 'a zone ingress', egress: 'a zone egress' };
const TOKENS_NEEDED: Readonly<Record<ProxyType, string>> = {
  dataplane: 'a dataplane token',
  ingress: 'a zone token whose scope holds ingress (or a zone-ingress token)',
  egress: 'a zone token whose scope holds egress',
};

/** Whether a kind of token can authenticate a type of proxy. */
const authenticates = (kind: TokenKind, proxyType: ProxyType): boolean =>
  proxyType === 'dataplane' ? kind === 'dataplane' : kind === 'zone' || (proxyType === 'ingress' && kind === 'zoneIngress');

/** The refusal of a token that did not verify: which token the proxy needs when it presented another kind, else why it failed. */
function refusal(credential: string, proxyType: ProxyType, reason: string): StreamRefusal {
  const kind = tokenKindOf(credential);
  if (kind !== undefined && !authenticates(kind, proxyType)) {
    return new StreamRefusal(`authentication failed: ${TOKEN_NAMES[kind]} cannot authenticate ${PROXY_NAMES[proxyType]}; it takes ${TOKENS_NEEDED[proxyType]}`);
  }
  return new StreamRefusal(`authentication failed: ${reason}`);
}

export class Authenticator {
  constructor(private readonly options: AuthenticatorOptions) {}

  /** Whether a proxy of this type must present a token (the bootstrap refuses to go on without one). */
  requiresToken(proxyType: ProxyType): boolean {
    return (proxyType === 'dataplane' ? this.options.dataplanes : this.options.zoneProxies) !== 'none';
  }

  /** Checks a dataplane's token against the dataplane it connects as; throws the refusal. */
  async authenticateDataplane(credential: string, dataplane: { mesh: string; name: string; spec: DataplaneSpec }): Promise<void> {
    if (this.options.dataplanes === 'none') return;
    const verified = await this.options.tokens.verifyDataplaneToken(credential, { mesh: dataplane.mesh, name: dataplane.name, tags: tagValuesOf(dataplane.spec) });
    if (!verified.ok) throw refusal(credential, 'dataplane', verified.reason);
  }

  /** Checks a zone ingress's or egress's zone token (a legacy zone-ingress token also does for ingresses). */
  async authenticateZoneProxy(credential: string, proxyType: 'ingress' | 'egress'): Promise<void> {
    if (this.options.zoneProxies === 'none') return;
    const verified = await this.options.tokens.verifyZoneToken(credential, this.options.zone, proxyType);
    if (verified.ok) return;
    if (proxyType === 'ingress') {
      const legacy = await this.options.tokens.verifyZoneIngressToken(credential, this.options.zone);
      if (legacy.ok) return;
    }
    throw refusal(credential, proxyType, verified.reason);
  }
}
