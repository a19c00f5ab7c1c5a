// What the services pages derive from a ServiceInsight (docs/insights.md): its status as the
// badge of a proxy's status, and its type in words.
import type { Schemas } from '../../api/client.js';
import type { ProxyStatus } from '../../status.js';

export type ServiceInsight = Schemas['ServiceInsight'];

/** The service's status as a proxy's; none for a service without proxies (`not_available`). */
export function serviceStatus(insight: Pick<ServiceInsight, 'status'>): ProxyStatus | undefined {
  switch (insight.status) {
    case 'online':
      return 'online';
    case 'offline':
      return 'offline';
    case 'partially_degraded':
      return 'partiallyDegraded';
    default:
      return undefined;
  }
}

const TYPE_LABELS: Readonly<Record<NonNullable<ServiceInsight['serviceType']>, string>> = {
  external: 'External',
  gateway_builtin: 'Builtin gateway',
  gateway_delegated: 'Delegated gateway',
};

/** Internal unless the insight says otherwise. */
export const serviceTypeLabel = (insight: Pick<ServiceInsight, 'serviceType'>): string => (insight.serviceType ? TYPE_LABELS[insight.serviceType] : 'Internal');
