// Which policies apply to a data plane proxy, with the reference's ranking: pure functions over
// plain resources. See README.md.
export type {
  AnyPolicy,
  DataplaneResource,
  ExternalServiceResource,
  MeshResource,
  MeshSnapshot,
  PoliciesByKind,
  PolicyKind,
  PolicyOf,
  PolicySpecs,
} from './snapshot.js';
export { indexPolicies, type PolicyIndex } from './policy-index.js';
export { compareRanks, rankOf, type Rank, selectorMatches } from './selector.js';
export { type InboundInterface, PASS_THROUGH_SERVICE } from './proxy.js';
export { type InboundMatch, type MatchedPolicies, matchPolicies, type OutboundMatch, type ServiceMatch } from './match-policies.js';
export type { PermittedExternalService } from './external-services.js';
export { type DestinationEntry, resolveRouteConf, splitWithDestination, type TrafficRouteConf, type TrafficRouteSplit } from './traffic-route.js';
export { type Attachment, type AttachmentPolicies, attachmentsOfPolicy, type AttachmentType, listAttachments } from './attachments.js';
export {
  GATEWAY_CONNECTION_POLICY_KINDS,
  type GatewayConnectionPolicyKind,
  type GatewayDestination,
  type GatewayDestinationPolicies,
  type GatewayRedirect,
  type GatewayRewrite,
  type GatewayRouteEntry,
  type GatewayRouteMatch,
  type HeaderChanges,
  type NameValue,
  type PathRewrite,
} from './gateway-route-table.js';
export {
  type GatewayHost,
  type GatewayListener,
  type GatewayMatch,
  type GatewayProtocol,
  hostnameMatches,
  matchGateway,
  routesInUse,
  WILDCARD_HOSTNAME,
} from './gateway.js';
export {
  type DescribedDestination,
  describeGateway,
  type GatewayDescription,
  gatewayAttachmentsOfPolicy,
  type GatewayListenerView,
  type GatewayPolicyAttachment,
  type ResourceKeyEntry,
} from './gateway-inspection.js';
export {
  dataplanesMatchingGateway,
  dataplanesSelectedBy,
  type GatewayPolicyItem,
  matchesAnySelector,
  type PolicyDataplaneItem,
  type SidecarPolicyItem,
} from './policy-dataplanes.js';
export { mayAffect, maySelect, policyReach, type PolicyReach, type ProxyServices, proxyServicesOf, type ReachCondition, type ServiceSet } from './reach.js';
export { matchVirtualOutbounds, virtualOutboundEntries, type VirtualOutboundEntry } from './virtual-outbound.js';
export {
  type AnyTargetRefPolicy,
  byTargetRef,
  indexTargetRefPolicies,
  namesReferTo,
  RULE_MATCHES_HASH_TAG,
  ruleMatchesHash,
  type TargetingPolicy,
  type TargetRefIndex,
  type TargetRefPoliciesByKind,
  type TargetRefPolicyKind,
  type TargetRefPolicyOf,
  type TargetRefPolicySpecs,
  type TargetRefSnapshot,
} from './target-ref-policies.js';
export { intersects, isSubset, type Subset, subsetCombinations, subsetOfTags, subsetOfTargetRef, type SubsetTag } from './target-ref-subset.js';
export { mergeConfs, type MergeOptions, sameJson } from './target-ref-merge.js';
export { buildRules, computeRule, type Rule, type RuleEntry } from './target-ref-rules.js';
export {
  type InboundListener,
  type OutboundListener,
  resolveRoute,
  selectedListeners,
  targetRefProxyOf,
  targetRefSelects,
  targetRefSelector,
  targetRefService,
  type TargetRefProxy,
} from './target-ref-select.js';
export {
  destinationConf,
  type InboundRules,
  inboundRulesOf,
  matchTargetRefPolicies,
  proxyConf,
  type TargetRefConfOf,
  type TargetRefMatch,
  type TargetRefRule,
  type TargetRefRules,
  targetRefRulesOf,
  zoneEgressRulesOf,
} from './target-ref-match.js';
export { listRuleItems, type RuleItem, type RuleItemType, targetRefPolicyDataplaneItem, type VipDomains, withTargetRefPolicies } from './target-ref-inspection.js';
