// Zones authenticating to their global with a zone token of scope `cp`, when the global requires
// it (docs/multizone.md, Authentication).
import type { TokenService } from '@mesh/tokens';

/** The check a global runs on each connecting zone: the reason it is refused, or undefined. */
export function zoneTokenAuthentication(tokens: TokenService): (zone: string, token: string | undefined) => Promise<string | undefined> {
  return async (zone, token) => {
    if (!token) return 'a zone token is required: set multizone.zone.kds.authn.zoneTokenFile on the zone';
    const verified = await tokens.verifyZoneToken(token, zone, 'cp');
    return verified.ok ? undefined : verified.reason;
  };
}
