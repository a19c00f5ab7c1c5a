// The running counts behind one mesh's MeshInsight and ServiceInsights. Dataplane contributions
// are added and subtracted as they change, so no request has to walk the mesh's dataplanes.
import type { MeshInsightSpec, ServiceInsightSpec } from '@mesh/model';
import type { DataplaneContribution, ProxyType, ServiceType } from './contribution.js';
import type { DataplaneStatus } from './status.js';

/** Dataplane counts by status; `total` counts every member. */
export interface StatusCounts {
  total: number;
  online: number;
  offline: number;
  partiallyDegraded: number;
}

const newCounts = (): StatusCounts => ({ total: 0, online: 0, offline: 0, partiallyDegraded: 0 });

function count(counts: StatusCounts, status: DataplaneStatus, sign: 1 | -1): void {
  counts.total += sign;
  counts[status] += sign;
}

/** Counts by a key (version, backend); a key goes away with its last member. */
class CountsByKey {
  private readonly byKey = new Map<string, StatusCounts>();

  add(key: string, status: DataplaneStatus, sign: 1 | -1): void {
    let counts = this.byKey.get(key);
    if (!counts) this.byKey.set(key, (counts = newCounts()));
    count(counts, status, sign);
    if (counts.total === 0) this.byKey.delete(key);
  }

  /** Keys in code-unit order, as the reference's JSON maps come out. */
  render(total: (counts: StatusCounts) => number = (c) => c.total): Record<string, StatusCountsJson> | undefined {
    if (this.byKey.size === 0) return undefined;
    const out: Record<string, StatusCountsJson> = {};
    for (const key of [...this.byKey.keys()].sort(byCodeUnit)) {
      const counts = this.byKey.get(key)!;
      out[key] = countsJson(counts, total(counts));
    }
    return out;
  }
}

export interface StatusCountsJson {
  total?: number;
  online?: number;
  offline?: number;
  partiallyDegraded?: number;
}

/** proto3 JSON: zero counters are omitted. */
function countsJson(counts: StatusCounts, total = counts.total): StatusCountsJson {
  const json: StatusCountsJson = {};
  if (total) json.total = total;
  if (counts.online) json.online = counts.online;
  if (counts.offline) json.offline = counts.offline;
  if (counts.partiallyDegraded) json.partiallyDegraded = counts.partiallyDegraded;
  return json;
}

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The MeshInsight spec (its kind's schema) in the reference's field order; zero counters and empty maps omitted. */
export type { MeshInsightSpec } from '@mesh/model';

export type ServiceStatus = 'online' | 'offline' | 'partially_degraded' | 'not_available';

/**
 * One service of a ServiceInsight (its kind's schema), as served: `internal`, the zero type, and
 * a status for a service nothing names (the proto's zero value) are omitted.
 */
export type ServiceStat = ServiceInsightSpec;

export interface ExternalServiceEntry {
  service: string;
  address: string;
}

interface ServiceCounts {
  online: number;
  offline: number;
  issuedBackends: Map<string, number>;
  /** Inbounds and gateways naming the service, by their type. */
  dataplaneRefs: Map<ServiceType, number>;
  /** External services naming it: external service name -> address. */
  externalAddresses: Map<string, string>;
}

/** When dataplanes of several types share a service name, the first type listed here names it. */
const TYPE_PRECEDENCE: readonly ServiceType[] = ['internal', 'gateway_delegated', 'gateway_builtin'];

export interface MeshSummary {
  dataplanesByType: Readonly<Record<ProxyType, Readonly<StatusCounts>>>;
  policies: number;
  /** Services by type; `total` counts services, the others count them by status. */
  services: Record<ServiceType, StatusCounts>;
}

const STATUS_COUNTER = { online: 'online', offline: 'offline', partially_degraded: 'partiallyDegraded' } as const;

function classify(counts: ServiceCounts): { type: ServiceType; status: ServiceStatus } {
  const type = TYPE_PRECEDENCE.find((t) => counts.dataplaneRefs.has(t)) ?? 'external';
  if (type === 'external') return { type, status: 'not_available' };
  const total = counts.online + counts.offline;
  return { type, status: counts.online === 0 ? 'offline' : counts.online === total ? 'online' : 'partially_degraded' };
}

/** The reference's DNS defaults (`dnsServer.domain`, `dnsServer.serviceVipPort`): `backend.mesh:80`. */
const internalAddressPort = (service: string): string => `${service}.mesh:80`;

function addTo<K>(map: Map<K, number>, key: K, delta: number): void {
  const next = (map.get(key) ?? 0) + delta;
  if (next === 0) map.delete(key);
  else map.set(key, next);
}

export class MeshTally {
  private readonly dataplanes = newCounts();
  private readonly byType: Record<ProxyType, StatusCounts> = { standard: newCounts(), gatewayBuiltin: newCounts(), gatewayDelegated: newCounts() };
  private readonly meshDpVersions = new CountsByKey();
  private readonly envoyVersions = new CountsByKey();
  private readonly issuedBackends = new CountsByKey();
  private readonly supportedBackends = new CountsByKey();
  /** Service name -> inbounds and gateways naming it (MeshInsight counts distinct names). */
  private readonly internalServices = new Map<string, number>();
  private readonly services = new Map<string, ServiceCounts>();
  private sortedServices: string[] | undefined;
  private readonly externalServices = new Map<string, ExternalServiceEntry>();
  private readonly policies = new Map<string, number>();
  private readonly contributions = new Map<string, DataplaneContribution>();

  private meshTime: string;
  private serviceTime: string;
  /** Counts the changes of the ServiceInsights, which share one modification time that may not move. */
  private serviceChanges = 0;
  /**
   * What `meshInsight()`, `serviceStat()` and `summary()` last returned, kept until the figures
   * they show change (when the times above move): readers polling unchanged insights get the
   * same objects.
   */
  private meshInsightMemo: MeshInsightSpec | undefined;
  private readonly serviceStatMemo = new Map<string, ServiceStat>();
  private summaryMemo: MeshSummary | undefined;

  constructor(
    /** The mesh's creation time, which its insights carry. */
    readonly creationTime: string,
    /** When the figures were first computed. */
    time: string,
  ) {
    this.meshTime = time;
    this.serviceTime = time;
  }

  /** When the MeshInsight last changed. */
  get meshInsightTime(): string {
    return this.meshTime;
  }

  /** When any of the ServiceInsights last changed. */
  get serviceInsightTime(): string {
    return this.serviceTime;
  }

  /** Moves on whenever some ServiceInsight of the mesh changes. */
  get serviceInsightChanges(): number {
    return this.serviceChanges;
  }

  /** A dataplane's status as the counts have it; undefined for one the mesh does not hold. */
  dataplaneStatus(name: string): DataplaneStatus | undefined {
    return this.contributions.get(name)?.status;
  }

  /** Replaces a dataplane's contribution (undefined: the dataplane is gone). */
  setDataplane(name: string, next: DataplaneContribution | undefined, time: string): void {
    const previous = this.contributions.get(name);
    // Most changes are of a proxy's insight whose counters alone moved: nothing to count again.
    if (previous === undefined ? next === undefined : next !== undefined && sameContribution(previous, next)) return;
    if (previous) this.apply(previous, -1);
    if (next) {
      this.apply(next, 1);
      this.contributions.set(name, next);
    } else {
      this.contributions.delete(name);
    }
    this.meshChanged(time);
    if (serviceFacts(previous) !== serviceFacts(next)) this.servicesChanged(time);
  }

  setExternalService(name: string, next: ExternalServiceEntry | undefined, time: string): void {
    const previous = this.externalServices.get(name);
    if (previous) {
      const counts = this.services.get(previous.service)!;
      counts.externalAddresses.delete(name);
      this.dropIfUnused(previous.service, counts);
      this.externalServices.delete(name);
    }
    if (next) {
      this.serviceCounts(next.service).externalAddresses.set(name, next.address);
      this.externalServices.set(name, next);
    }
    if ((previous === undefined) !== (next === undefined)) this.meshChanged(time);
    if (JSON.stringify(previous) !== JSON.stringify(next)) this.servicesChanged(time);
  }

  setPolicyCount(kind: string, total: number, time: string): void {
    if ((this.policies.get(kind) ?? 0) === total) return;
    if (total === 0) this.policies.delete(kind);
    else this.policies.set(kind, total);
    this.meshChanged(time);
  }

  /** The MeshInsight spec; the same object until it changes (callers must not modify it). */
  meshInsight(): MeshInsightSpec {
    this.meshInsightMemo ??= this.computeMeshInsight();
    return this.meshInsightMemo;
  }

  private computeMeshInsight(): MeshInsightSpec {
    const policies: Record<string, { total: number }> = {};
    for (const kind of [...this.policies.keys()].sort(byCodeUnit)) policies[kind] = { total: this.policies.get(kind)! };
    const external = this.externalServices.size;
    const internal = this.internalServices.size;
    const services: MeshInsightSpec['services'] = {};
    if (internal + external) services.total = internal + external;
    if (internal) services.internal = internal;
    if (external) services.external = external;
    // A quirk kept from the reference: a version's total leaves out partially degraded proxies.
    const onlineOrOffline = (counts: StatusCounts) => counts.online + counts.offline;
    const { standard, gatewayBuiltin, gatewayDelegated } = this.byType;
    const gateway: StatusCounts = {
      total: gatewayBuiltin.total + gatewayDelegated.total,
      online: gatewayBuiltin.online + gatewayDelegated.online,
      offline: gatewayBuiltin.offline + gatewayDelegated.offline,
      partiallyDegraded: gatewayBuiltin.partiallyDegraded + gatewayDelegated.partiallyDegraded,
    };
    return {
      dataplanes: countsJson(this.dataplanes),
      ...(this.policies.size > 0 ? { policies } : {}),
      dpVersions: omitUndefined({ meshDp: this.meshDpVersions.render(onlineOrOffline), envoy: this.envoyVersions.render(onlineOrOffline) }),
      mTLS: omitUndefined({ issuedBackends: this.issuedBackends.render(), supportedBackends: this.supportedBackends.render() }),
      services,
      dataplanesByType: {
        standard: countsJson(standard),
        gateway: countsJson(gateway),
        gatewayBuiltin: countsJson(gatewayBuiltin),
        gatewayDelegated: countsJson(gatewayDelegated),
      },
    };
  }

  /** Names of the mesh's services, in code-unit order. */
  serviceNames(): readonly string[] {
    this.sortedServices ??= [...this.services.keys()].sort(byCodeUnit);
    return this.sortedServices;
  }

  /**
   * A service's stat; a service nothing names gets empty counts, as the reference answers. A
   * named service's stat is the same object until some service changes (callers must not modify it).
   */
  serviceStat(name: string): ServiceStat {
    const counts = this.services.get(name);
    if (!counts) return { dataplanes: {}, addressPort: internalAddressPort(name) };
    let stat = this.serviceStatMemo.get(name);
    if (!stat) this.serviceStatMemo.set(name, (stat = this.computeServiceStat(name, counts)));
    return stat;
  }

  private computeServiceStat(name: string, counts: ServiceCounts): ServiceStat {
    const { type, status } = classify(counts);
    const total = counts.online + counts.offline;
    const stat: ServiceStat = { status, dataplanes: {} };
    if (total) stat.dataplanes.total = total;
    if (counts.online) stat.dataplanes.online = counts.online;
    if (counts.offline) stat.dataplanes.offline = counts.offline;
    if (counts.issuedBackends.size > 0) {
      stat.issuedBackends = Object.fromEntries([...counts.issuedBackends].sort(([a], [b]) => byCodeUnit(a, b)));
    }
    if (type === 'internal') {
      stat.addressPort = internalAddressPort(name);
      return stat;
    }
    stat.serviceType = type;
    // External: the address of the first external service by name, as a listing meets them.
    if (type === 'external') stat.addressPort = counts.externalAddresses.get([...counts.externalAddresses.keys()].sort(byCodeUnit)[0]!);
    return stat;
  }

  /** Figures the global summary (`/global-insight`) adds up across meshes. */
  summary(): MeshSummary {
    this.summaryMemo ??= this.computeSummary();
    return this.summaryMemo;
  }

  private computeSummary(): MeshSummary {
    const services: MeshSummary['services'] = { internal: newCounts(), gateway_builtin: newCounts(), gateway_delegated: newCounts(), external: newCounts() };
    for (const counts of this.services.values()) {
      const { type, status } = classify(counts);
      services[type].total++;
      if (status !== 'not_available') services[type][STATUS_COUNTER[status]]++;
    }
    return {
      dataplanesByType: this.byType,
      policies: [...this.policies.values()].reduce((sum, n) => sum + n, 0),
      services,
    };
  }

  private meshChanged(time: string): void {
    this.meshTime = time;
    this.meshInsightMemo = undefined;
    this.summaryMemo = undefined;
  }

  private servicesChanged(time: string): void {
    this.serviceTime = time;
    this.serviceChanges++;
    this.serviceStatMemo.clear();
    this.summaryMemo = undefined;
  }

  private apply(contribution: DataplaneContribution, sign: 1 | -1): void {
    const { status } = contribution;
    count(this.dataplanes, status, sign);
    count(this.byType[contribution.proxyType], status, sign);
    this.meshDpVersions.add(contribution.meshDpVersion, status, sign);
    this.envoyVersions.add(contribution.envoyVersion, status, sign);
    const mtls = contribution.mtls;
    if (mtls) {
      this.issuedBackends.add(mtls.issuedBackend, status, sign);
      for (const backend of mtls.supportedBackends) this.supportedBackends.add(backend, status, sign);
    }
    for (const service of contribution.services) {
      addTo(this.internalServices, service.name, sign);
      // Each inbound counts, and a partially degraded proxy counts as offline.
      const counts = this.serviceCounts(service.name);
      if (status === 'online') counts.online += sign;
      else counts.offline += sign;
      if (mtls?.issuedBackend) addTo(counts.issuedBackends, mtls.issuedBackend, sign);
      addTo(counts.dataplaneRefs, service.type, sign);
      this.dropIfUnused(service.name, counts);
    }
  }

  private serviceCounts(name: string): ServiceCounts {
    let counts = this.services.get(name);
    if (!counts) {
      counts = { online: 0, offline: 0, issuedBackends: new Map(), dataplaneRefs: new Map(), externalAddresses: new Map() };
      this.services.set(name, counts);
      this.sortedServices = undefined;
    }
    return counts;
  }

  private dropIfUnused(name: string, counts: ServiceCounts): void {
    if (counts.dataplaneRefs.size > 0 || counts.externalAddresses.size > 0) return;
    this.services.delete(name);
    this.sortedServices = undefined;
  }
}

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item, at) => item === b[at]);

/** Whether two contributions add the same figures. */
function sameContribution(a: DataplaneContribution, b: DataplaneContribution): boolean {
  if (a.status !== b.status || a.proxyType !== b.proxyType || a.meshDpVersion !== b.meshDpVersion || a.envoyVersion !== b.envoyVersion) return false;
  if (a.mtls === undefined || b.mtls === undefined) {
    if (a.mtls !== b.mtls) return false;
  } else if (a.mtls.issuedBackend !== b.mtls.issuedBackend || !sameList(a.mtls.supportedBackends, b.mtls.supportedBackends)) {
    return false;
  }
  return a.services.length === b.services.length && a.services.every((service, at) => service.name === b.services[at]!.name && service.type === b.services[at]!.type);
}

/** What of a contribution shows in ServiceInsights: online or not, the issued backend, the services. */
const serviceFacts = (c: DataplaneContribution | undefined): string =>
  c ? JSON.stringify([c.status === 'online', c.mtls?.issuedBackend ?? '', c.services]) : '';

function omitUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
