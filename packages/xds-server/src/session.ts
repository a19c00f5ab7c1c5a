// One connected proxy: where its configuration comes from, what it reported (node metadata) and
// was issued (its mesh certificate), and its current snapshot, recomputed when the proxy
// configuration service says a change may have altered it.
import { type DataplaneSpec, meshKind } from '@mesh/model';
import type { DataplaneResource } from '@mesh/policy-matcher';
import { issueMeshIdentity, loadMeshCa, type IssuedIdentity, type MeshCa } from '@mesh/pki';
import type { MeshProxies, ProxyConfigService } from '@mesh/proxy-config';
import type { ResourceReader } from '@mesh/store';
import type { MeshIdentity, ProxyConfig, ProxyMetadata, ZoneProxyMetadata } from '@mesh/xds-renderer';
import { tagValuesOf } from './auth.js';
import { renderGrpcClientConfig } from './grpc-clients.js';
import type { MtlsFigures } from './insights.js';
import { adminPortOf, dnsPortOf, METADATA, type ProxyNode, RESOURCE_TYPE_OF, stringMetadata } from './proxy-node.js';
import type { RefreshQueue } from './refresh-queue.js';
import { type Snapshot, snapshotOf } from './snapshot.js';
import type { XdsMetrics } from './telemetry.js';

export interface SessionOptions {
  proxyConfigs: ProxyConfigService;
  /** Where recomputations wait their turn (shared by the proxies of the server). */
  queue: RefreshQueue;
  store: ResourceReader;
  now: () => Date;
  onError: (error: unknown, what: string) => void;
  metrics?: XdsMetrics;
}

/** A configuration that could not be computed is tried again after this long. */
const RETRY_AFTER_MS = 1000;

/** A certificate is renewed once this share of its validity has passed. */
const RENEW_AT = 0.8;

interface HeldIdentity {
  readonly backend: string;
  /** The services and tags it names, as comparable text. */
  readonly subject: string;
  readonly issued: IssuedIdentity;
  readonly issuedAt: Date;
  readonly renewAt: number;
}

const SERVICE_TAG = 'mesh.io/service';

/** Mesh CAs by the stored Mesh they were read for: a Mesh change is a new stored object. */
const caByMesh = new WeakMap<object, Promise<MeshCa | undefined>>();

export class ProxySession {
  snapshot: Snapshot | undefined;
  /** Names a gRPC client asked listeners for (services): its configuration has one per name. */
  private grpcListenerNames: readonly string[] = [];
  private readonly unwatch: Array<() => void> = [];
  private refreshing = false;
  private refreshAgain = false;
  private stopped = false;
  private identity: HeldIdentity | undefined;
  private readonly egressIdentities = new Map<string, HeldIdentity>();
  private metadata: ProxyMetadata | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  /** Set when the identity was (re)issued since the insight last recorded it. */
  certificateRegenerated = false;

  constructor(
    private readonly options: SessionOptions,
    readonly node: ProxyNode,
    /** Called after each new snapshot. */
    private readonly onSnapshot: () => void,
  ) {}

  get resourceType(): string {
    return RESOURCE_TYPE_OF[this.node.proxyType];
  }

  /** Follows the proxy's configuration and computes its first snapshot. */
  async start(): Promise<void> {
    const { proxyConfigs } = this.options;
    const refresh = () => this.refresh();
    if (this.node.grpcClient) {
      // A gRPC client's listeners are the services it names: any change of its mesh may matter.
      this.unwatch.push(proxyConfigs.watchMesh(this.node.mesh, refresh));
    } else {
      // A Mesh change (its mTLS settings decide the certificate) reaches every proxy of the mesh this way too.
      this.unwatch.push(proxyConfigs.watchProxy({ type: this.resourceType, mesh: this.node.mesh, name: this.node.name }, refresh));
    }
    await new Promise<void>((resolve) => this.options.queue.enqueue(() => this.refreshNow().then(resolve)));
  }

  stop(): void {
    this.stopped = true;
    for (const unwatch of this.unwatch.splice(0)) unwatch();
    clearTimeout(this.renewTimer);
    const { proxyConfigs } = this.options;
    if (this.node.proxyType === 'dataplane') {
      if (this.metadata) proxyConfigs.setDataplaneMetadata(this.node.mesh, this.node.name, undefined);
    } else {
      proxyConfigs.setZoneProxyMetadata(this.resourceType, this.node.name, undefined);
    }
  }

  /** A gRPC client asked for other listeners. */
  setGrpcListenerNames(names: readonly string[]): void {
    const sorted = [...new Set(names)].sort();
    if (sorted.join('\u0000') === this.grpcListenerNames.join('\u0000')) return;
    this.grpcListenerNames = sorted;
    this.refresh();
  }

  /** The dataplane's mTLS figures for its insight; undefined when it holds no mesh certificate. */
  mtlsFigures(): MtlsFigures | undefined {
    const identity = this.identity;
    if (!identity) return undefined;
    return {
      certificateExpirationTime: identity.issued.notAfter.toISOString(),
      lastCertificateRegeneration: identity.issuedAt.toISOString(),
      issuedBackend: identity.backend,
      supportedBackends: [identity.backend],
    };
  }

  /** Recomputes the snapshot soon; changes arriving meanwhile are folded into one recomputation. */
  refresh(): void {
    if (this.stopped) return;
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.options.queue.enqueue(this.queuedRefresh);
  }

  /** The recomputation as queued: one entry per session, whatever the number of changes. */
  private readonly queuedRefresh = (): Promise<void> => {
    if (this.refreshing) {
      this.refreshAgain = true;
      return Promise.resolve();
    }
    return this.refreshNow();
  };

  private async refreshNow(): Promise<void> {
    this.refreshing = true;
    try {
      do {
        this.refreshAgain = false;
        await this.options.proxyConfigs.settled();
        if (this.stopped) return;
        const started = performance.now();
        const current = this.currentConfig();
        const config = current instanceof Promise ? await current : current;
        if (this.stopped) return;
        const result = config === undefined || config === this.snapshot?.config ? 'skip' : this.snapshot === undefined ? 'generated' : 'changed';
        if (config && result !== 'skip') {
          this.snapshot = snapshotOf(config, this.snapshot);
          this.onSnapshot();
        }
        this.options.metrics?.generation(this.node.proxyType, result, performance.now() - started);
      } while (this.refreshAgain);
    } catch (error) {
      this.options.metrics?.generationError();
      // A mesh's CA secrets are written just after the Mesh: read again shortly, whatever failed.
      this.options.onError(error, `the configuration of ${this.node.id}`);
      if (!this.stopped) setTimeout(() => this.refresh(), RETRY_AFTER_MS).unref();
    } finally {
      this.refreshing = false;
    }
  }

  /**
   * The proxy's configuration now; undefined while its resource does not exist (the last one
   * stays). A dataplane of a mesh without mTLS gets it without waiting: a push computes thousands.
   */
  private currentConfig(): ProxyConfig | undefined | Promise<ProxyConfig | undefined> {
    const { proxyConfigs } = this.options;
    const { node } = this;
    if (node.proxyType === 'ingress') {
      this.setZoneMetadata({});
      return proxyConfigs.zoneIngressConfig(node.name);
    }
    if (node.proxyType === 'egress') {
      return this.egressIdentitiesNow().then((identities) => {
        this.setZoneMetadata({ identities });
        return proxyConfigs.zoneEgressConfig(node.name);
      });
    }
    const mesh = proxyConfigs.mesh(node.mesh);
    const dataplane = mesh?.dataplane(node.name);
    if (!mesh || !dataplane) return undefined;
    if (!mesh.meshContext().spec.mtls?.enabledBackend) {
      this.identity = undefined;
      return this.dataplaneConfig(mesh, dataplane);
    }
    return this.ensureIdentity(dataplane.spec).then(() => this.dataplaneConfig(mesh, dataplane));
  }

  private dataplaneConfig(mesh: MeshProxies, dataplane: DataplaneResource): ProxyConfig | undefined {
    const { proxyConfigs } = this.options;
    const { node } = this;
    if (node.grpcClient) {
      return renderGrpcClientConfig({ context: mesh.meshContext(), dataplane, services: this.grpcListenerNames });
    }
    this.setDataplaneMetadata();
    // Setting metadata may have dropped the configuration: the read renders it again.
    return proxyConfigs.mesh(node.mesh)?.proxyConfig(node.name);
  }

  /** What the node metadata tells of the proxy, read once: a stream's node does not change. */
  private nodeMetadata: ProxyMetadata | undefined;

  /** Hands the proxy configuration service the node metadata and the certificate, when they are new to it. */
  private setDataplaneMetadata(): void {
    const { node } = this;
    const issued = this.identity?.issued;
    if (this.metadata && this.metadata.identity?.certificatePem === issued?.certificatePem) return;
    const adminPort = adminPortOf(node);
    const dnsPort = dnsPortOf(node);
    this.nodeMetadata ??= {
      ...(adminPort !== undefined ? { adminPort } : {}),
      ...(dnsPort !== undefined ? { dnsPort } : {}),
      ...optional('adminAddress', stringMetadata(node, METADATA.adminAddress)),
      ...optional('accessLogSocketPath', stringMetadata(node, METADATA.accessLogSocketPath)),
      ...optional('metricsSocketPath', stringMetadata(node, METADATA.metricsSocketPath)),
      ...optional('metricsCertPath', stringMetadata(node, METADATA.metricsCertPath)),
      ...optional('metricsKeyPath', stringMetadata(node, METADATA.metricsKeyPath)),
    };
    const wanted: ProxyMetadata = issued ? { ...this.nodeMetadata, identity: meshIdentityOf(issued) } : this.nodeMetadata;
    this.metadata = wanted;
    this.options.proxyConfigs.setDataplaneMetadata(node.mesh, node.name, wanted);
  }

  private zoneMetadata: ZoneProxyMetadata | undefined;

  private setZoneMetadata(extra: ZoneProxyMetadata): void {
    const adminPort = adminPortOf(this.node);
    const wanted: ZoneProxyMetadata = { ...(adminPort !== undefined ? { adminPort } : {}), ...extra };
    if (this.zoneMetadata && this.zoneMetadata.adminPort === wanted.adminPort && sameIdentities(this.zoneMetadata.identities, wanted.identities)) return;
    this.zoneMetadata = wanted;
    this.options.proxyConfigs.setZoneProxyMetadata(this.resourceType, this.node.name, wanted);
  }

  /** Issues (or renews) the dataplane's mesh certificate when its mesh has mTLS on; drops it when off. */
  private async ensureIdentity(spec: DataplaneSpec): Promise<void> {
    const ca = await this.meshCa(this.node.mesh);
    if (!ca) {
      this.identity = undefined;
      return;
    }
    const tags = tagValuesOf(spec);
    const subject = JSON.stringify(tags);
    const held = this.identity;
    if (held && held.backend === ca.backend && held.subject === subject && this.options.now().getTime() < held.renewAt) return;
    this.identity = await this.issue(ca, this.node.mesh, tags[SERVICE_TAG] ?? [], tags, subject);
    this.certificateRegenerated = true;
    this.scheduleRenewal(this.identity.renewAt);
  }

  /** A zone egress terminates mesh mTLS: a certificate per mesh with mTLS on. */
  private async egressIdentitiesNow(): Promise<ReadonlyMap<string, MeshIdentity>> {
    const { items } = await this.options.store.list({ type: meshKind.name, offset: 0, size: 0 });
    const identities = new Map<string, MeshIdentity>();
    for (const stored of items) {
      const ca = await this.meshCa(stored.name);
      if (!ca) {
        this.egressIdentities.delete(stored.name);
        continue;
      }
      let held = this.egressIdentities.get(stored.name);
      if (!held || held.backend !== ca.backend || this.options.now().getTime() >= held.renewAt) {
        held = await this.issue(ca, stored.name, ['zone-egress'], { [SERVICE_TAG]: ['zone-egress'] }, 'zone-egress');
        this.egressIdentities.set(stored.name, held);
        this.scheduleRenewal(held.renewAt);
      }
      identities.set(stored.name, meshIdentityOf(held.issued));
    }
    return identities;
  }

  private async issue(ca: MeshCa, mesh: string, services: readonly string[], tags: Record<string, readonly string[]>, subject: string): Promise<HeldIdentity> {
    const issuedAt = this.options.now();
    const issued = await issueMeshIdentity(ca, { mesh, services, tags }, issuedAt);
    const validity = issued.notAfter.getTime() - issuedAt.getTime();
    return { backend: ca.backend, subject, issued, issuedAt, renewAt: issuedAt.getTime() + validity * RENEW_AT };
  }

  private scheduleRenewal(at: number): void {
    clearTimeout(this.renewTimer);
    // Timers hold at most about 24.8 days.
    const delay = Math.min(Math.max(0, at - this.options.now().getTime()), 2 ** 31 - 1);
    this.renewTimer = setTimeout(() => this.refresh(), delay);
    this.renewTimer.unref();
  }

  /** The CA of a mesh's enabled backend, read again when the Mesh changes. */
  private async meshCa(mesh: string): Promise<MeshCa | undefined> {
    const stored = await this.options.store.get({ type: meshKind.name, mesh: '', name: mesh });
    if (!stored) return undefined;
    let ca = caByMesh.get(stored);
    if (!ca) {
      const spec = JSON.parse(stored.spec) as { mtls?: Parameters<typeof loadMeshCa>[2] };
      ca = loadMeshCa(this.options.store, mesh, spec.mtls);
      caByMesh.set(stored, ca);
      ca.catch(() => caByMesh.delete(stored));
    }
    return ca;
  }
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}

const meshIdentityOf = (issued: IssuedIdentity): MeshIdentity => ({
  certificatePem: issued.certificatePem,
  privateKeyPem: issued.privateKeyPem,
  caPem: issued.caPem,
});

function sameIdentities(a: ReadonlyMap<string, MeshIdentity> | undefined, b: ReadonlyMap<string, MeshIdentity> | undefined): boolean {
  if ((a?.size ?? 0) !== (b?.size ?? 0)) return false;
  for (const [mesh, identity] of a ?? []) if (b?.get(mesh)?.certificatePem !== identity.certificatePem) return false;
  return true;
}
