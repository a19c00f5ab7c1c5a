// One mesh's proxies: the matcher's snapshot and index and the renderer's context of the mesh,
// and per dataplane its matched policies and rendered configuration. Results are computed on
// first read and kept until a change can alter them: a change drops the results its kind declares
// it affects (`affects`, docs/architecture.md): every proxy's, those of the proxies a policy
// selects before or after, a dataplane's own and the renders of the proxies reaching a service
// whose endpoints it moved. Snapshot, index and context are rebuilt lazily. The targetRef
// policies are matched apart (their rules per proxy), and a change of one drops the rules of
// exactly the proxies it selects before or after (docs/matching.md, What a change re-matches).
import {
  type AnyKind,
  DataplaneSpecSchema,
  externalServiceKind,
  isPolicyKind,
  isTargetRefPolicyKind,
  meshGatewayKind,
  meshGatewayRouteKind,
  meshHTTPRouteKind,
  type MeshSpec,
  meshTCPRouteKind,
  type ProxyImpact,
  SERVICE_TAG,
  trafficPermissionKind,
} from '@mesh/model';
import {
  type AnyPolicy,
  type AnyTargetRefPolicy,
  attachmentsOfPolicy,
  type DataplaneResource,
  dataplanesMatchingGateway,
  type ExternalServiceResource,
  type GatewayMatch,
  gatewayAttachmentsOfPolicy,
  indexPolicies,
  indexTargetRefPolicies,
  isSubset,
  type MatchedPolicies,
  type MeshResource,
  matchTargetRefPolicies,
  namesReferTo,
  matchGateway,
  matchPolicies,
  maySelect,
  mayAffect,
  type PoliciesByKind,
  type PolicyDataplaneItem,
  type PolicyIndex,
  type PolicyKind,
  type PolicyOf,
  type PolicyReach,
  policyReach,
  type ProxyServices,
  proxyServicesOf,
  type ResourceKeyEntry,
  routesInUse,
  sameJson,
  subsetOfTags,
  type TargetingPolicy,
  type TargetRefIndex,
  type TargetRefMatch,
  type TargetRefPoliciesByKind,
  type TargetRefPolicyKind,
  type TargetRefPolicyOf,
  targetRefPolicyDataplaneItem,
  type TargetRefProxy,
  targetRefProxyOf,
  targetRefRulesOf,
  targetRefSelects,
  targetRefService,
} from '@mesh/policy-matcher';
import type { StoredResource } from '@mesh/store';
import {
  type ConfigDump,
  type ConfigDumpOptions,
  forgetOwnResources,
  type MeshContext,
  prepareMeshContext,
  type ProxyConfig,
  type ProxyMetadata,
  renderDataplaneConfigDump,
  renderProxyConfig,
  type ZoneEgressResource,
  type ZoneIngressResource,
} from '@mesh/xds-renderer';
import { type EndpointSignature, endpointSignatureOf, NO_ENDPOINTS, servicesWithChangedEndpoints } from './endpoints.js';
import { type MeshVips, NO_VIPS } from './vips.js';
import { byName, dataplaneOf, type Held, inNameOrder, meshResourceOf, meshSpecOf, policyOf, secretDataOf, secretsUsedBy, setHeld, storedPolicyOf, targetRefPolicyOf } from './resources.js';

/** How much matching and rendering was done: tests and benchmarks read it to see what a change cost. */
export interface WorkCounters {
  matched: number;
  rendered: number;
  /** Proxies whose targetRef rules were built. */
  targetRefMatched: number;
}

/** The zone proxies of the control plane, which every mesh's endpoints may go through. */
export interface ZoneProxies {
  readonly localZone: string | undefined;
  ingresses(): readonly ZoneIngressResource[];
  egresses(): readonly ZoneEgressResource[];
}

/** What inspection shows of a proxy: the sidecar view, or a builtin gateway's listeners and routes. */
export type ProxyMatch = { readonly kind: 'sidecar'; readonly policies: MatchedPolicies } | { readonly kind: 'gateway'; readonly gateway: GatewayMatch };

interface ProxyEntry {
  readonly stored: StoredResource;
  readonly dataplane: DataplaneResource;
  readonly builtinGateway: boolean;
  readonly endpoints: EndpointSignature;
  /** Undefined until matched, and again once a change may alter the match (the config goes with it). */
  match: MatchedPolicies | undefined;
  /** Builtin gateways only: what inspection shows of them. */
  gatewayMatch: GatewayMatch | undefined;
  /** The services of the last match, kept while it is stale: changes are tested against them. */
  services: ProxyServices | undefined;
  config: ProxyConfig | undefined;
  /** The services of the dataplane's inbounds, which the targetRef policies naming a service select among. */
  readonly inboundServices: readonly string[];
  /** The inbounds, gateway listeners and outbounds targetRef policies select; a builtin gateway's follow its MeshGateway. */
  targetRefProxy: TargetRefProxy | undefined;
  /** The targetRef policies and rules; undefined until built, and again once a change may alter them. */
  targetRef: TargetRefMatch | undefined;
  /** With the rules: the services the targetRef routes may send to, whose endpoints its configuration depends on. */
  routeServices: readonly string[];
}

/** Proxies filed by service, several per service. */
class ProxiesByService {
  private readonly byService = new Map<string, Set<ProxyEntry>>();

  add(services: Iterable<string>, entry: ProxyEntry): void {
    for (const service of services) {
      const entries = this.byService.get(service);
      if (entries) entries.add(entry);
      else this.byService.set(service, new Set([entry]));
    }
  }

  remove(services: Iterable<string>, entry: ProxyEntry): void {
    for (const service of services) {
      const entries = this.byService.get(service);
      entries?.delete(entry);
      if (entries?.size === 0) this.byService.delete(service);
    }
  }

  *of(services: Iterable<string>): Generator<ProxyEntry> {
    for (const service of services) yield* this.byService.get(service) ?? [];
  }
}

function sameMembers(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const member of a) if (!b.has(member)) return false;
  return true;
}

/**
 * The services whose endpoints the targetRef routes of a proxy depend on: once a MeshHTTPRoute or
 * MeshTCPRoute rule applies, each outbound's service (its protocol decides the listener) and the
 * backends (and mirrors) of the rules holding it.
 */
function routeServicesOf(match: TargetRefMatch): string[] {
  const http = targetRefRulesOf(match, meshHTTPRouteKind.name)?.to ?? [];
  const tcp = targetRefRulesOf(match, meshTCPRouteKind.name)?.to ?? [];
  if (http.length === 0 && tcp.length === 0) return [];
  const services = new Set<string>();
  for (const outbound of match.proxy.outbounds) {
    const service = outbound.tags[SERVICE_TAG] ?? '';
    services.add(service);
    const subset = subsetOfTags({ [SERVICE_TAG]: service });
    for (const rule of http) {
      if (!isSubset(rule.subset, subset)) continue;
      for (const httpRule of rule.conf.Rules ?? []) {
        for (const backend of httpRule.default.backendRefs ?? []) services.add(backend.name ?? '');
        for (const filter of httpRule.default.filters ?? []) if (filter.requestMirror) services.add(filter.requestMirror.backendRef.name ?? '');
      }
    }
    for (const rule of tcp) if (isSubset(rule.subset, subset)) for (const backend of rule.conf.default.backendRefs) services.add(backend.name ?? '');
  }
  return [...services];
}

export class MeshProxies {
  private meshStored: StoredResource | undefined;
  private meshSpec: MeshSpec | undefined;
  private readonly policies = new Map<PolicyKind, Map<string, AnyPolicy>>();
  private readonly targetRefPolicies = new Map<TargetRefPolicyKind, Map<string, AnyTargetRefPolicy>>();
  /** Resources every proxy of the mesh reads, by kind: external services. */
  private readonly meshWide = new Map<string, Map<string, Held<MeshResource<unknown>>>>();
  private readonly externalServices = new Map<string, Held<ExternalServiceResource>>();
  private readonly secrets = new Map<string, Held<string>>();
  private readonly proxies = new Map<string, ProxyEntry>();
  private readonly builtinGateways = new Set<ProxyEntry>();
  private readonly byOwnService = new ProxiesByService();
  private readonly byReachedService = new ProxiesByService();
  private readonly byRouteService = new ProxiesByService();
  private readonly byInboundService = new ProxiesByService();
  private sortedNames: string[] | undefined;
  private index: PolicyIndex | undefined;
  private targetRefIndex: TargetRefIndex | undefined;
  private context: MeshContext | undefined;
  /** The mesh's virtual IPs: outbounds and DNS names of transparent proxies. */
  private vips: MeshVips = NO_VIPS;
  /** What the connected proxies reported and were issued (node metadata, certificates), by dataplane name. */
  private readonly metadata = new Map<string, ProxyMetadata>();
  /**
   * Dataplanes whose rendered configuration a change dropped, or which appeared or went away,
   * since the last `takeTouched()`: the proxies a change can affect. Only a rendered
   * configuration is worth telling about: whoever follows a proxy has read it.
   */
  private touched = new Set<string>();

  constructor(
    readonly name: string,
    private readonly zoneProxies: ZoneProxies,
    private readonly counters: WorkCounters,
  ) {
    this.meshWide.set(externalServiceKind.name, this.externalServices);
  }

  /** False while only resources of the mesh are known, not the Mesh itself. */
  get exists(): boolean {
    return this.meshStored !== undefined;
  }

  // --- Changes -----------------------------------------------------------------------------

  /**
   * The rule of each declaration (`affects`) for a resource of the mesh: how it is held for
   * matching and rendering, and which results its change drops. The Mesh itself and the zone
   * proxies, which are no resources of a mesh, come through `setMesh` and `zoneProxiesChanged`.
   */
  private readonly rules: Readonly<Record<ProxyImpact, (kind: AnyKind, name: string, stored: StoredResource | undefined) => void>> = {
    meshProxies: (kind, name, stored) => this.setMeshWide(kind.name, name, stored),
    selectedProxies: (kind, name, stored) => {
      if (isTargetRefPolicyKind(kind.name)) this.setTargetRefPolicy(kind.name, name, stored);
      else if (isPolicyKind(kind.name)) this.setPolicy(kind.name, name, stored);
    },
    proxyAndConsumers: (_kind, name, stored) => this.setDataplane(name, stored),
    referringProxies: (_kind, name, stored) => this.setSecret(name, stored),
    zoneProxies: () => {},
    nothing: () => {},
  };

  /** A resource of the mesh changed (undefined: it is gone), applied by the rule its kind declares. */
  apply(kind: AnyKind, name: string, stored: StoredResource | undefined): void {
    this.rules[kind.affects](kind, name, stored);
  }

  setMesh(stored: StoredResource): void {
    if (this.meshStored === stored) return;
    this.meshStored = stored;
    this.meshSpec = meshSpecOf(stored);
    // The spec decides the metrics inbound, mTLS, backends: everything.
    this.policiesChanged();
    this.dropAllMatches();
  }

  private setPolicy(kind: PolicyKind, name: string, stored: StoredResource | undefined): void {
    let byName = this.policies.get(kind);
    const before = byName?.get(name);
    if ((before && storedPolicyOf(before)) === stored) return;
    const permissionsBefore = kind === trafficPermissionKind.name && this.reachesExternalServices() ? this.externalServicePermissions() : undefined;
    const after = stored && policyOf(stored);
    if (after) {
      if (!byName) this.policies.set(kind, (byName = new Map<string, AnyPolicy>()));
      byName.set(name, after);
    } else byName?.delete(name);
    this.policiesChanged();
    for (const policy of [before, after]) if (policy) this.dropMatchesWithin(policyReach(kind, policy.spec));
    if (permissionsBefore) this.dropMatchesOfMovedPermissions(permissionsBefore);
    // Gateway listeners pick up policies by tags the reach does not see (listener and gateway tags).
    for (const entry of this.builtinGateways) this.dropMatch(entry);
    // A builtin gateway's listeners, which targetRef policies select, are its MeshGateway's.
    if (kind === meshGatewayKind.name) {
      for (const entry of this.builtinGateways) {
        entry.targetRefProxy = undefined;
        this.dropTargetRef(entry);
      }
    }
  }

  /**
   * A targetRef policy changed: the rules of the proxies it selects before or after the change
   * are dropped. A MeshHTTPRoute also moves the policies targeting it, as they select what it does.
   */
  private setTargetRefPolicy(kind: TargetRefPolicyKind, name: string, stored: StoredResource | undefined): void {
    let byName = this.targetRefPolicies.get(kind);
    const before = byName?.get(name);
    if ((before && storedPolicyOf(before)) === stored) return;
    const after = stored && targetRefPolicyOf(stored);
    const targetingRoute = kind === meshHTTPRouteKind.name ? this.policiesTargetingRoute(name) : [];
    const affected = new Set<ProxyEntry>();
    const collect = (policies: ReadonlyArray<TargetingPolicy | undefined>) => {
      const present = policies.filter((policy): policy is TargetingPolicy => policy !== undefined);
      // Routes are read only by the policies that target one.
      const routes = present.some((policy) => policy.spec.targetRef.kind === meshHTTPRouteKind.name) ? this.routesInStoreOrder() : [];
      for (const policy of present) this.collectSelected(policy, routes, affected);
    };
    collect([before, ...targetingRoute]);
    if (after) {
      if (!byName) this.targetRefPolicies.set(kind, (byName = new Map<string, AnyTargetRefPolicy>()));
      byName.set(name, after);
    } else byName?.delete(name);
    this.targetRefIndex = undefined;
    collect([after, ...targetingRoute]);
    for (const entry of affected) this.dropTargetRef(entry);
  }

  private setDataplane(name: string, stored: StoredResource | undefined): void {
    const before = this.proxies.get(name);
    if (before?.stored === stored) return;
    if (before) this.forget(before);
    let after: ProxyEntry | undefined;
    if (stored) {
      const dataplane = dataplaneOf(stored);
      after = {
        stored,
        dataplane,
        builtinGateway: dataplane.spec.networking?.gateway?.type === 'BUILTIN',
        endpoints: endpointSignatureOf(dataplane.spec),
        match: undefined,
        gatewayMatch: undefined,
        services: undefined,
        config: undefined,
        inboundServices: (dataplane.spec.networking?.inbound ?? []).flatMap((inbound) => inbound.tags?.[SERVICE_TAG] ?? []),
        targetRefProxy: undefined,
        targetRef: undefined,
        routeServices: [],
      };
      this.proxies.set(name, after);
      this.byInboundService.add(after.inboundServices, after);
      if (after.builtinGateway) this.builtinGateways.add(after);
    }
    if (!before || !after) this.sortedNames = undefined;
    this.context = undefined;
    this.touched.add(name);
    const moved = servicesWithChangedEndpoints(before?.endpoints ?? NO_ENDPOINTS, after?.endpoints ?? NO_ENDPOINTS);
    for (const entry of this.byReachedService.of(moved)) this.dropConfig(entry);
    for (const entry of this.byRouteService.of(moved)) this.dropConfig(entry);
  }

  /**
   * What a connected proxy reported and was issued; its configuration is rendered with it from
   * now on (undefined forgets it). Kept for a dataplane not stored yet, which may come later.
   * Metadata equal to what the configuration was rendered with (none and an empty report alike)
   * keeps it: a configuration rendered before the proxy connected is served as it is.
   */
  setProxyMetadata(name: string, metadata: ProxyMetadata | undefined): void {
    const before = this.metadata.get(name);
    if (before === metadata) return;
    if (metadata) this.metadata.set(name, metadata);
    else this.metadata.delete(name);
    const entry = this.proxies.get(name);
    if (entry && !sameJson(before ?? {}, metadata ?? {})) this.dropConfig(entry);
  }

  /**
   * Drops the rendered configurations no connected proxy claimed (none reported its metadata):
   * those rendered ahead of proxies that did not come, and the resources of theirs the renderer
   * keeps for the next render. No proxy is served them, so no follower is told; a later read
   * renders them again.
   */
  dropUnclaimedConfigs(): void {
    for (const [name, entry] of this.proxies) {
      if (this.metadata.has(name)) continue;
      entry.config = undefined;
      forgetOwnResources(entry.dataplane);
    }
  }

  /** The dataplanes a change may have altered since the last call (see `touched`). */
  takeTouched(): ReadonlySet<string> {
    const touched = this.touched;
    this.touched = new Set();
    return touched;
  }

  /**
   * The mesh's virtual IPs changed: only transparent proxies read them (their outbounds and DNS
   * names), so only they are matched and rendered again.
   */
  setVips(vips: MeshVips): void {
    if (this.vips === vips) return;
    this.vips = vips;
    this.policiesChanged();
    for (const entry of this.proxies.values()) {
      if (!entry.dataplane.spec.networking?.transparentProxying) continue;
      this.dropMatch(entry);
      entry.targetRefProxy = undefined;
      this.dropTargetRef(entry);
    }
  }

  /** A resource every proxy reads (an external service: which proxies a permission opens it to depends on every permission). */
  private setMeshWide(kind: string, name: string, stored: StoredResource | undefined): void {
    let byName = this.meshWide.get(kind);
    if (!byName) this.meshWide.set(kind, (byName = new Map<string, Held<MeshResource<unknown>>>()));
    if (!setHeld(byName, name, stored, meshResourceOf)) return;
    this.policiesChanged();
    this.dropAllMatches();
  }

  private setSecret(name: string, stored: StoredResource | undefined): void {
    if (!setHeld(this.secrets, name, stored, secretDataOf)) return;
    this.context = undefined;
    // Secrets reach configuration through the TLS settings of external services and the certificates of builtin gateways.
    const used = [...this.externalServices.values()].some(({ value }) => secretsUsedBy(value).includes(name));
    if (used) this.dropAllConfigs();
    else for (const entry of this.builtinGateways) this.dropConfig(entry);
  }

  /** The mesh is deleted, and everything in it: each dataplane goes away. */
  forgetDataplanes(): void {
    for (const name of this.dataplaneNames()) this.setDataplane(name, undefined);
  }

  /** A zone ingress or egress changed: endpoints through them are only used with mTLS, or with zone egress routing. */
  zoneProxiesChanged(kind: 'ingress' | 'egress'): void {
    this.context = undefined;
    const usesThem = kind === 'ingress' ? Boolean(this.meshSpec?.mtls?.enabledBackend) : this.meshSpec?.routing?.zoneEgress === true;
    if (usesThem) this.dropAllConfigs();
  }

  // --- Reads ---------------------------------------------------------------------------------

  /** Dataplane names in code-unit order, as the store lists them. */
  dataplaneNames(): readonly string[] {
    this.sortedNames ??= [...this.proxies.keys()].sort(byName);
    return this.sortedNames;
  }

  /** The matched policies of a dataplane; undefined when there is no such dataplane. */
  match(name: string): ProxyMatch | undefined {
    const entry = this.proxies.get(name);
    if (!entry) return undefined;
    const gateway = this.gatewayMatchOf(entry);
    return gateway ? { kind: 'gateway', gateway } : { kind: 'sidecar', policies: this.matched(entry) };
  }

  /** The targetRef policies selecting a dataplane and their rules; undefined when there is no such dataplane. */
  targetRefMatch(name: string): TargetRefMatch | undefined {
    const entry = this.proxies.get(name);
    return entry && this.targetRefMatched(entry);
  }

  /** Whether a targetRef policy selects a dataplane (the `_resources/dataplanes` question); false for unknown ones. */
  targetRefPolicySelects(kind: TargetRefPolicyKind, policyName: string, dataplaneName: string): boolean {
    const policy = this.targetRefPolicies.get(kind)?.get(policyName);
    const entry = this.proxies.get(dataplaneName);
    return policy !== undefined && entry !== undefined && targetRefSelects(policy, this.targetRefProxyOf(entry), this.targetRefPolicyIndex().routes);
  }

  /** The rendered configuration of a dataplane: shared and read-only. */
  proxyConfig(name: string): ProxyConfig | undefined {
    const entry = this.proxies.get(name);
    return entry && this.rendered(entry);
  }

  /** The `/xds` document of a dataplane, from its rendered configuration (or the one given, as sent to it). */
  configDump(name: string, options: ConfigDumpOptions = {}, config?: ProxyConfig): ConfigDump | undefined {
    const entry = this.proxies.get(name);
    if (!entry) return undefined;
    const metadata = this.metadata.get(name);
    const adminPort = metadata?.adminPort;
    return renderDataplaneConfigDump(entry.dataplane, config ?? this.rendered(entry), { ...(adminPort !== undefined ? { adminPort } : {}), ...options });
  }

  /** The stored Dataplane of a name. */
  dataplane(name: string): DataplaneResource | undefined {
    return this.proxies.get(name)?.dataplane;
  }

  /** The DNS names of the mesh's virtual IPs (inspection lists them among a destination's addresses). */
  vipDomains(): MeshVips['domains'] {
    return this.vips.domains;
  }

  /** The renderer's context of the mesh in its current state (zone proxies render from it). */
  meshContext(): MeshContext {
    this.context ??= prepareMeshContext({
      snapshot: this.policyIndex().snapshot,
      // In name order, as a from-scratch read of the store: endpoints of equal address keep that order.
      dataplanes: this.dataplaneNames().map((name) => this.entry(name).dataplane),
      zoneIngresses: this.zoneProxies.ingresses(),
      zoneEgresses: this.zoneProxies.egresses(),
      ...(this.zoneProxies.localZone !== undefined ? { localZone: this.zoneProxies.localZone } : {}),
      secrets: new Map([...this.secrets].map(([name, { value }]) => [name, value])),
      vipDomains: this.vips.domains,
    });
    return this.context;
  }

  /**
   * Where a policy attaches, per dataplane in name order (`{policy-path}/{name}/dataplanes`):
   * an unknown policy attaches nowhere. Dataplanes out of the policy's reach are skipped.
   */
  dataplanesSelectedBy(kind: PolicyKind, policyName: string): PolicyDataplaneItem[] {
    const policy = this.policies.get(kind)?.get(policyName);
    if (!policy) return [];
    const reach = policyReach(kind, policy.spec);
    return this.dataplaneNames().flatMap((name): PolicyDataplaneItem[] => {
      const entry = this.entry(name);
      const match = this.matched(entry);
      if (!maySelect(reach, match.ownServices)) return [];
      const dataplane = { mesh: this.name, name };
      const gateway = this.gatewayMatchOf(entry);
      if (gateway) {
        const attachment = gatewayAttachmentsOfPolicy(gateway, kind, policyName);
        return attachment ? [{ kind: 'MeshGatewayDataplane', dataplane, ...attachment }] : [];
      }
      const attachments = attachmentsOfPolicy(match, kind, policyName);
      return attachments.length > 0 ? [{ kind: 'SidecarDataplane', dataplane, attachments }] : [];
    });
  }

  /** The dataplanes a targetRef policy selects, in name order (`{policy-path}/{name}/dataplanes`); none for an unknown policy. */
  dataplanesSelectedByTargetRef(kind: TargetRefPolicyKind, policyName: string): PolicyDataplaneItem[] {
    if (!this.targetRefPolicies.get(kind)?.has(policyName)) return [];
    return this.dataplaneNames().flatMap((name) => {
      const entry = this.entry(name);
      const item = targetRefPolicyDataplaneItem(this.targetRefMatched(entry), entry.builtinGateway, kind, policyName);
      return item ? [item] : [];
    });
  }

  /** Builtin gateway dataplanes a MeshGateway selects, winning or not; undefined for an unknown gateway. */
  gatewayDataplanes(gatewayName: string): ResourceKeyEntry[] | undefined {
    const gateway = this.policy(meshGatewayKind.name, gatewayName);
    if (!gateway) return undefined;
    const dataplanes = this.dataplaneNames().map((name) => this.entry(name).dataplane);
    return dataplanesMatchingGateway(gateway, dataplanes).map(({ mesh, name }) => ({ mesh, name }));
  }

  /** Builtin gateway dataplanes whose route tables use a MeshGatewayRoute; undefined for an unknown route. */
  gatewayRouteDataplanes(routeName: string): ResourceKeyEntry[] | undefined {
    if (!this.policy(meshGatewayRouteKind.name, routeName)) return undefined;
    return this.dataplaneNames().flatMap((name) => {
      const gateway = this.gatewayMatchOf(this.entry(name));
      return gateway && routesInUse(gateway).has(routeName) ? [{ mesh: this.name, name }] : [];
    });
  }

  // --- Internals -----------------------------------------------------------------------------

  private entry(name: string): ProxyEntry {
    const entry = this.proxies.get(name);
    if (!entry) throw new Error(`dataplane ${this.name}/${name} is not known`);
    return entry;
  }

  /** The policy of a kind by name; the map of a kind holds only policies of that kind. */
  private policy<K extends PolicyKind>(kind: K, name: string): PolicyOf<K> | undefined {
    return this.policies.get(kind)?.get(name) as PolicyOf<K> | undefined;
  }

  private policyIndex(): PolicyIndex {
    if (!this.index) {
      // Name order, as the store lists them: zone proxies and external service permissions keep the given order.
      const policies = Object.fromEntries([...this.policies].map(([kind, byName]) => [kind, inNameOrder(byName)])) as PoliciesByKind;
      const externalServices = inNameOrder(this.externalServices).map(({ value }) => value);
      this.index = indexPolicies({ mesh: this.name, meshSpec: this.meshSpec, policies, externalServices, vipOutbounds: this.vips.outbounds });
    }
    return this.index;
  }

  /** The mesh's targetRef policies, indexed for matching (zone egresses read them too). */
  targetRefPolicyIndex(): TargetRefIndex {
    if (!this.targetRefIndex) {
      // Name order, as the store lists them: routes a policy targets resolve in that order.
      const policies = Object.fromEntries([...this.targetRefPolicies].map(([kind, byName]) => [kind, inNameOrder(byName)])) as TargetRefPoliciesByKind;
      this.targetRefIndex = indexTargetRefPolicies({ mesh: this.name, policies });
    }
    return this.targetRefIndex;
  }

  private routesInStoreOrder(): TargetRefPolicyOf<'MeshHTTPRoute'>[] {
    const routes = this.targetRefPolicies.get(meshHTTPRouteKind.name);
    return routes ? (inNameOrder(routes) as TargetRefPolicyOf<'MeshHTTPRoute'>[]) : [];
  }

  private targetRefProxyOf(entry: ProxyEntry): TargetRefProxy {
    entry.targetRefProxy ??= targetRefProxyOf(entry.dataplane, this.policyIndex());
    return entry.targetRefProxy;
  }

  private targetRefMatched(entry: ProxyEntry): TargetRefMatch {
    if (entry.targetRef === undefined) {
      entry.targetRef = matchTargetRefPolicies(this.targetRefProxyOf(entry), this.targetRefPolicyIndex());
      entry.routeServices = routeServicesOf(entry.targetRef);
      this.byRouteService.add(entry.routeServices, entry);
      this.counters.targetRefMatched++;
    }
    return entry.targetRef;
  }

  /** The policies whose top-level targetRef names a route of this name. */
  private policiesTargetingRoute(routeName: string): AnyTargetRefPolicy[] {
    return [...this.targetRefPolicies.values()].flatMap((byName) =>
      [...byName.values()].filter((policy) => policy.spec.targetRef.kind === meshHTTPRouteKind.name && namesReferTo(this.name, policy.spec.targetRef.name ?? '', routeName)),
    );
  }

  /**
   * Adds the proxies a policy selects: among the proxies of the service its targetRef requires
   * (and the builtin gateways, whose listener tags may name it), the builtin gateways for a
   * MeshGateway, or every proxy.
   */
  private collectSelected(policy: TargetingPolicy, routes: readonly TargetRefPolicyOf<'MeshHTTPRoute'>[], into: Set<ProxyEntry>): void {
    const ref = policy.spec.targetRef;
    const service = targetRefService(ref);
    const candidates: Iterable<ProxyEntry> =
      ref.kind === meshGatewayKind.name ? this.builtinGateways : service === undefined ? this.proxies.values() : [...this.byInboundService.of([service]), ...this.builtinGateways];
    for (const entry of candidates) {
      if (!into.has(entry) && targetRefSelects(policy, this.targetRefProxyOf(entry), routes)) into.add(entry);
    }
  }

  /** Drops a proxy's targetRef rules, and its rendered configuration with them. */
  private dropTargetRef(entry: ProxyEntry): void {
    entry.targetRef = undefined;
    this.byRouteService.remove(entry.routeServices, entry);
    entry.routeServices = [];
    this.dropConfig(entry);
  }

  private matched(entry: ProxyEntry): MatchedPolicies {
    if (entry.match === undefined) {
      const index = this.policyIndex();
      entry.match = matchPolicies(entry.dataplane, index);
      if (entry.builtinGateway) entry.gatewayMatch = matchGateway(entry.dataplane, index);
      // A builtin gateway reaches the services of its routes' destinations.
      this.fileByServices(entry, proxyServicesOf(entry.gatewayMatch ?? entry.match, index.snapshot));
      this.counters.matched++;
    }
    return entry.match;
  }

  /** A builtin gateway's match; undefined for sidecars. */
  private gatewayMatchOf(entry: ProxyEntry): GatewayMatch | undefined {
    if (!entry.builtinGateway) return undefined;
    this.matched(entry);
    return entry.gatewayMatch;
  }

  private rendered(entry: ProxyEntry): ProxyConfig {
    if (entry.config === undefined) {
      const policies = this.matched(entry);
      const metadata = this.metadata.get(entry.dataplane.name);
      const targetRef = this.targetRefMatched(entry);
      const gateway = entry.builtinGateway ? entry.gatewayMatch : undefined;
      entry.config = renderProxyConfig({ context: this.meshContext(), dataplane: entry.dataplane, policies, targetRef, ...(gateway ? { gateway } : {}), ...(metadata ? { metadata } : {}) });
      this.counters.rendered++;
    }
    return entry.config;
  }

  private fileByServices(entry: ProxyEntry, services: ProxyServices): void {
    // A re-match usually reaches the same services: the entry stays where it is filed.
    if (entry.services && sameMembers(entry.services.own, services.own) && sameMembers(entry.services.reached, services.reached)) {
      entry.services = services;
      return;
    }
    this.unfile(entry);
    entry.services = services;
    this.byOwnService.add(services.own, entry);
    this.byReachedService.add(services.reached, entry);
  }

  private unfile(entry: ProxyEntry): void {
    if (!entry.services) return;
    this.byOwnService.remove(entry.services.own, entry);
    this.byReachedService.remove(entry.services.reached, entry);
  }

  private forget(entry: ProxyEntry): void {
    this.unfile(entry);
    this.byRouteService.remove(entry.routeServices, entry);
    this.byInboundService.remove(entry.inboundServices, entry);
    this.builtinGateways.delete(entry);
    this.proxies.delete(entry.dataplane.name);
  }

  private policiesChanged(): void {
    this.index = undefined;
    this.context = undefined;
  }

  private dropMatch(entry: ProxyEntry): void {
    entry.match = undefined;
    entry.gatewayMatch = undefined;
    this.dropConfig(entry);
  }

  private dropConfig(entry: ProxyEntry): void {
    if (entry.config === undefined) return;
    entry.config = undefined;
    this.touched.add(entry.dataplane.name);
  }

  private dropAllMatches(): void {
    for (const entry of this.proxies.values()) this.dropMatch(entry);
  }

  private dropAllConfigs(): void {
    for (const entry of this.proxies.values()) this.dropConfig(entry);
  }

  /** Drops the matches of the proxies a policy can affect: looked up by the services it pins, or all. */
  private dropMatchesWithin(reach: PolicyReach): void {
    for (const entry of this.candidatesOf(reach)) {
      if (entry.match !== undefined && entry.services && mayAffect(reach, entry.services)) this.dropMatch(entry);
    }
  }

  /**
   * The proxies a policy may affect, by condition: those of the services its proxy selectors pin,
   * or, when they select any proxy, those reaching the destinations it pins (a policy from `*` to
   * one service looks at that service's callers, not at every proxy); all when neither is pinned.
   * A proxy may come twice: once its match is dropped it is passed over.
   */
  private candidatesOf(reach: PolicyReach): Iterable<ProxyEntry> {
    const own: string[] = [];
    const reached: string[] = [];
    for (const { proxies, destinations } of reach.conditions) {
      if (!proxies.any) own.push(...proxies.services);
      else if (destinations && !destinations.any) reached.push(...destinations.services);
      else return this.proxies.values();
    }
    return this.filedUnder(own, reached);
  }

  private *filedUnder(own: readonly string[], reached: readonly string[]): Generator<ProxyEntry> {
    yield* this.byOwnService.of(own);
    yield* this.byReachedService.of(reached);
  }

  /** Whether a permission change can move external services between matched proxies. */
  private reachesExternalServices(): boolean {
    if (this.externalServices.size === 0) return false;
    for (const entry of this.proxies.values()) if (entry.match) return true;
    return false;
  }

  /** The TrafficPermission deciding which proxies reach each external service, chosen by the service's tags. */
  private externalServicePermissions(): Map<string, AnyPolicy | undefined> {
    const externalServices = [...this.externalServices.keys()];
    // A probe with one inbound per external service: an inbound's permission is chosen by its tags alone, as an external service's.
    const probe: DataplaneResource = {
      mesh: this.name,
      name: '',
      spec: DataplaneSpecSchema.parse({
        networking: { address: '0.0.0.0', inbound: externalServices.map((name) => ({ port: 1, tags: this.externalServices.get(name)?.value.spec.tags ?? {} })) },
      }),
    };
    const inbounds = matchPolicies(probe, this.policyIndex()).inbounds;
    return new Map(externalServices.map((name, at) => [name, inbounds[at]?.trafficPermission]));
  }

  /**
   * A permission change can hand an external service to another permission: the senders of both
   * gain or lose it, though neither is the changed policy (whose reach is already dropped).
   */
  private dropMatchesOfMovedPermissions(before: Map<string, AnyPolicy | undefined>): void {
    const after = this.externalServicePermissions();
    for (const [name, permission] of before) {
      const now = after.get(name);
      if (now?.name === permission?.name) continue;
      for (const policy of [permission, now]) if (policy) this.dropMatchesWithin(policyReach(trafficPermissionKind.name, policy.spec as PolicyOf<'TrafficPermission'>['spec']));
    }
  }
}
