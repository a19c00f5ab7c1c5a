// What a proxy registering itself stores (docs/xds.md, Connecting): the resource it brought, with
// the fields others keep up to date in the stored one carried over. A proxy coming back (a
// restart, a reconnect) brings its template, which never holds them; writing the template as it
// is would wipe them until they are written again, and other zones' proxies lose the endpoints
// they stand for meanwhile.
import { dataplaneKind, zoneIngressKind, type DataplaneSpec, type ZoneIngressSpec } from '@mesh/model';

type Inbound = NonNullable<NonNullable<DataplaneSpec['networking']>['inbound']>[number];

/** An inbound as health checking knows it: its address (the dataplane's unless its own) and port. */
const inboundKey = (inbound: Inbound, networkingAddress: string | undefined): string => `${inbound.address || networkingAddress || ''}:${inbound.port ?? 0}`;

/**
 * A dataplane keeps the `health` of its inbounds, which health checking sets (an inbound of the
 * brought resource that says nothing of its health, at the address and port of a stored one).
 */
function withInboundHealth(brought: DataplaneSpec, stored: DataplaneSpec): DataplaneSpec {
  const healthByInbound = new Map<string, Inbound['health']>();
  for (const inbound of stored.networking?.inbound ?? []) {
    if (inbound.health !== undefined) healthByInbound.set(inboundKey(inbound, stored.networking?.address), inbound.health);
  }
  const networking = brought.networking;
  if (!networking?.inbound || healthByInbound.size === 0) return brought;
  const inbound = networking.inbound.map((entry) => {
    const health = entry.health === undefined ? healthByInbound.get(inboundKey(entry, networking.address)) : undefined;
    return health === undefined ? entry : { ...entry, health };
  });
  return { ...brought, networking: { ...networking, inbound } };
}

/**
 * The spec a proxy registers: `brought` with what the control plane owns in `stored` (the
 * resource registered before): a zone ingress's `availableServices`, which its zone computes from
 * the zone's dataplanes; the `health` of a dataplane's inbounds. A zone egress owns nothing else.
 */
export function registeredSpec(resourceType: string, brought: Record<string, unknown>, stored: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!stored) return brought;
  switch (resourceType) {
    case zoneIngressKind.name:
      return { ...brought, availableServices: (stored as ZoneIngressSpec).availableServices ?? [] };
    case dataplaneKind.name:
      return withInboundHealth(brought, stored);
    default:
      return brought;
  }
}
