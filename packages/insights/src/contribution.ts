// What one dataplane adds to its mesh's insights (docs/insights.md). Aggregates
// add a dataplane's contribution and subtract it again when the dataplane or its insight changes.
import { SERVICE_TAG } from '@mesh/model';
import { dataplaneStatus, type DataplaneStatus } from './status.js';
import type { StoredDataplane, StoredDataplaneInsight } from './stored.js';

export type ProxyType = 'standard' | 'gatewayBuiltin' | 'gatewayDelegated';

/** ServiceInsight `serviceType`; `internal` is the proto's zero value. */
export type ServiceType = 'internal' | 'external' | 'gateway_delegated' | 'gateway_builtin';

const UNKNOWN_VERSION = 'unknown';

export interface DataplaneContribution {
  status: DataplaneStatus;
  proxyType: ProxyType;
  /** Versions its last subscription reported, `unknown` when none. */
  meshDpVersion: string;
  envoyVersion: string;
  /** Present when the proxy has a certificate. */
  mtls?: { issuedBackend: string; supportedBackends: string[] };
  /** The gateway's service, then each inbound's (repeats included: each counts in ServiceInsight). */
  services: Array<{ name: string; type: ServiceType }>;
}

export function dataplaneContribution(dataplane: StoredDataplane, insight: StoredDataplaneInsight | undefined): DataplaneContribution {
  const networking = dataplane.networking;
  const gateway = networking?.gateway;
  const builtin = gateway?.type === 'BUILTIN';
  const version = insight?.subscriptions?.at(-1)?.version;
  const services: DataplaneContribution['services'] = [];
  if (gateway) services.push({ name: gateway.tags?.[SERVICE_TAG] ?? '', type: builtin ? 'gateway_builtin' : 'gateway_delegated' });
  for (const inbound of networking?.inbound ?? []) services.push({ name: inbound.tags?.[SERVICE_TAG] ?? '', type: 'internal' });
  const contribution: DataplaneContribution = {
    status: dataplaneStatus(dataplane, insight),
    proxyType: gateway ? (builtin ? 'gatewayBuiltin' : 'gatewayDelegated') : 'standard',
    meshDpVersion: version?.meshDp?.version || UNKNOWN_VERSION,
    envoyVersion: version?.envoy?.version || UNKNOWN_VERSION,
    services,
  };
  const mtls = insight?.mTLS;
  if (mtls) contribution.mtls = { issuedBackend: mtls.issuedBackend ?? '', supportedBackends: mtls.supportedBackends ?? [] };
  return contribution;
}
