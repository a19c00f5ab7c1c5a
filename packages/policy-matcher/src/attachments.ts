// The inspection view of a sidecar's matches (docs/insights.md, Inspection): policies grouped by where they attach.
import type { MatchedPolicies } from './match-policies.js';
import type { AnyPolicy, PolicyKind } from './snapshot.js';

export type AttachmentType = 'dataplane' | 'inbound' | 'outbound' | 'service';

/** Where policies attach; the dataplane attachment has neither name nor service. */
export interface Attachment {
  readonly type: AttachmentType;
  readonly name?: string;
  readonly service?: string;
}

export interface KindedPolicy {
  readonly kind: PolicyKind;
  readonly policy: AnyPolicy;
}

/** An attachment with its policies grouped by kind, kinds in ascending order. */
export interface AttachmentPolicies<P = AnyPolicy> extends Attachment {
  readonly matchedPolicies: Readonly<Partial<Record<PolicyKind, readonly P[]>>>;
}

type Collected = { attachment: Attachment; policies: KindedPolicy[] };

const attachmentOf = (type: AttachmentType, name: string, service: string | undefined): Attachment =>
  service ? { type, name, service } : { type, name };

const kinded = <K extends PolicyKind>(kind: K, policies: ReadonlyArray<AnyPolicy | undefined>): KindedPolicy[] =>
  policies.flatMap((policy) => (policy ? [{ kind, policy }] : []));

/** Every attachment with its policies in the reference's order of kinds, empty ones included. */
function collect(matched: MatchedPolicies): Collected[] {
  const inbounds = matched.inbounds.map((inbound) => ({
    attachment: attachmentOf('inbound', inbound.name, inbound.service),
    policies: [
      ...kinded('TrafficPermission', [inbound.trafficPermission]),
      ...kinded('FaultInjection', inbound.faultInjections),
      ...kinded('RateLimit', inbound.rateLimits),
    ],
  }));
  const outbounds = matched.outbounds.map((outbound) => ({
    attachment: attachmentOf('outbound', outbound.name, outbound.service),
    policies: [...kinded('Timeout', [outbound.timeout]), ...kinded('RateLimit', [outbound.rateLimit]), ...kinded('TrafficRoute', [outbound.trafficRoute])],
  }));
  const services = matched.services.map((service) => ({
    attachment: attachmentOf('service', service.service, service.service),
    policies: [
      ...kinded('TrafficLog', [service.trafficLog]),
      ...kinded('HealthCheck', [service.healthCheck]),
      ...kinded('CircuitBreaker', [service.circuitBreaker]),
      ...kinded('Retry', [service.retry]),
    ],
  }));
  const dataplane = {
    attachment: { type: 'dataplane' as const },
    policies: [...kinded('TrafficTrace', [matched.trafficTrace]), ...kinded('ProxyTemplate', [matched.proxyTemplate])],
  };
  return [...inbounds, ...outbounds, ...services, dataplane];
}

/** The reference sorts attachments by their Go `%s` text, `{type name service}`: dataplane < inbound < outbound < service. */
const sortKey = (attachment: Attachment): string => `{${attachment.type} ${attachment.name ?? ''} ${attachment.service ?? ''}}`;

const byAttachment = (a: { attachment: Attachment }, b: { attachment: Attachment }): number => {
  const keyA = sortKey(a.attachment);
  const keyB = sortKey(b.attachment);
  return keyA < keyB ? -1 : keyA > keyB ? 1 : 0;
};

const identity = (policy: AnyPolicy): AnyPolicy => policy;

/**
 * The items of `/meshes/{mesh}/dataplanes/{name}/policies` for a sidecar or delegated gateway:
 * attachments with at least one policy, sorted, policies grouped by kind. `present` turns a
 * policy into what the response carries (its full entity).
 */
export function listAttachments(matched: MatchedPolicies): AttachmentPolicies[];
export function listAttachments<P>(matched: MatchedPolicies, present: (policy: AnyPolicy, kind: PolicyKind) => P): AttachmentPolicies<P>[];
export function listAttachments<P>(matched: MatchedPolicies, present?: (policy: AnyPolicy, kind: PolicyKind) => P): AttachmentPolicies<P | AnyPolicy>[] {
  const show: (policy: AnyPolicy, kind: PolicyKind) => P | AnyPolicy = present ?? identity;
  return collect(matched)
    .filter(({ policies }) => policies.length > 0)
    .sort(byAttachment)
    .map(({ attachment, policies }) => {
      const byKind = new Map<PolicyKind, Array<P | AnyPolicy>>();
      for (const { kind, policy } of policies) {
        const shown = show(policy, kind);
        const known = byKind.get(kind);
        if (known) known.push(shown);
        else byKind.set(kind, [shown]);
      }
      const kinds = [...byKind.keys()].sort();
      return { ...attachment, matchedPolicies: Object.fromEntries(kinds.map((kind) => [kind, byKind.get(kind) ?? []])) };
    });
}

/**
 * Where one policy attaches on a sidecar, sorted like the attachments; an attachment
 * repeats once per occurrence of the policy (a fault injection matched by two destinations).
 */
export function attachmentsOfPolicy(matched: MatchedPolicies, kind: PolicyKind, name: string): Attachment[] {
  return collect(matched)
    .flatMap(({ attachment, policies }) =>
      policies.filter((p) => p.kind === kind && p.policy.name === name).map(() => ({ attachment })),
    )
    .sort(byAttachment)
    .map(({ attachment }) => attachment);
}
