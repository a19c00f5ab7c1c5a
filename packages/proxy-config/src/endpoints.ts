// What one dataplane contributes to its mesh's endpoints (the endpoints of the mesh context, docs/xds.md, What a proxy receives),
// per service, so a dataplane change re-renders the consumers of a service only when that
// service's endpoints actually moved.
import { type DataplaneSpec, SERVICE_TAG } from '@mesh/model';

/** Per service, the dataplane's endpoints of it as comparable text. */
export type EndpointSignature = ReadonlyMap<string, string>;

export function endpointSignatureOf(spec: DataplaneSpec): EndpointSignature {
  const signature = new Map<string, string>();
  const networking = spec.networking;
  for (const inbound of networking?.inbound ?? []) {
    // As the renderer: an inbound with a health block that is not ready serves no traffic.
    if (inbound.health !== undefined && inbound.health.ready !== true) continue;
    const tags = inbound.tags ?? {};
    const service = tags[SERVICE_TAG] ?? '';
    const address = networking?.advertisedAddress || inbound.address || networking?.address || '';
    const endpoint = JSON.stringify([address, inbound.port ?? 0, tags]);
    const known = signature.get(service);
    signature.set(service, known === undefined ? endpoint : `${known}\n${endpoint}`);
  }
  return signature;
}

/** The services whose endpoints differ between two signatures of one dataplane. */
export function servicesWithChangedEndpoints(before: EndpointSignature, after: EndpointSignature): string[] {
  const changed: string[] = [];
  for (const [service, endpoints] of before) if (after.get(service) !== endpoints) changed.push(service);
  for (const service of after.keys()) if (!before.has(service)) changed.push(service);
  return changed;
}

export const NO_ENDPOINTS: EndpointSignature = new Map();
