// Which requests came over the internal API's socket (zone-forwarding.ts), for access.ts to trust.
const internalRequests = new WeakSet<object>();

/** Marks a request that arrived on the internal API's socket. */
export function markInternalRequest(req: object): void {
  internalRequests.add(req);
}

/** A request this control plane makes of its own API: its caller is the control plane, an admin. */
export const isInternalRequest = (req: object): boolean => internalRequests.has(req);
