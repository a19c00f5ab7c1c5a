// Every configuration key and its default. The layout is the reference's 2.5.0 one (product name
// spelled `mesh`), plus this control plane's own keys (`store.sqlite`, `general.advertisedHostname`,
// `runtime.shutdownTimeout`, `runtime.heapGrowthPercent`, the API server's limits). The type of each default is the type of the key: a number, a boolean,
// a list of strings, a duration (a string written as a Go duration, shown the way Go prints it) or
// a string. Open maps and lists of numbers or objects of the reference (sidecar env vars, container
// patches, static token keys, excluded ports, container resources) are left out: nothing here reads
// them, and their type cannot be told from a default.
//
// Servers this control plane does not run yet (inter-CP, the Kubernetes runtime)
// keep their keys so that `/config` shows the reference's layout and the reference's
// configuration files load; their values have no effect until those servers exist.
import { homedir } from 'node:os';
import { join } from 'node:path';

// Functions, not shared objects: a setting written into one section must not show up in another.
const tlsVersions = () => ({ tlsMinVersion: 'TLSv1_2', tlsMaxVersion: '', tlsCipherSuites: [] });
const admins = () => ({ users: ['mesh-system:admin'], groups: ['mesh-system:admin'] });
const everyone = () => ({ users: [], groups: ['mesh-system:unauthenticated', 'mesh-system:authenticated'] });

export const DEFAULT_CONFIG = {
  environment: 'universal',
  mode: 'standalone',
  general: {
    workDir: join(homedir(), '.mesh'),
    advertisedHostname: 'localhost',
    dnsCacheTTL: '10s',
    tlsCertFile: '',
    tlsKeyFile: '',
    ...tlsVersions(),
  },
  store: {
    type: 'sqlite',
    // The most the SQLite file may hold, in bytes (0: no cap); writes beyond it answer 503, as on a full disk.
    sqlite: { path: '', maxSize: 0 },
    kubernetes: { systemNamespace: 'mesh-system' },
    postgres: {
      host: '127.0.0.1',
      port: 15432,
      user: 'mesh',
      password: 'mesh',
      dbName: 'mesh',
      driverName: 'pgx',
      connectionTimeout: 5,
      maxConnectionLifetime: '1h0m0s',
      maxConnectionLifetimeJitter: '1m0s',
      healthCheckInterval: '30s',
      minOpenConnections: 0,
      maxOpenConnections: 50,
      maxIdleConnections: 50,
      maxListQueryElements: 0,
      tls: { mode: 'disable', certPath: '', keyPath: '', caPath: '', disableSSLSNI: false },
      minReconnectInterval: '10s',
      maxReconnectInterval: '1m0s',
      readReplica: { host: '', port: 5432, ratio: 100 },
    },
    cache: { enabled: true, expirationTime: '1s' },
    upsert: { conflictRetryBaseBackoff: '200ms', conflictRetryMaxTimes: 10, conflictRetryJitterPercent: 30 },
    unsafeDelete: false,
  },
  bootstrapServer: {
    params: {
      adminAddress: '127.0.0.1',
      adminPort: 9901,
      adminAccessLogPath: '/dev/null',
      xdsHost: '',
      xdsPort: 0,
      xdsConnectTimeout: '1s',
    },
  },
  monitoringAssignmentServer: {
    port: 5676,
    apiVersions: ['v1'],
    assignmentRefreshInterval: '1s',
    defaultFetchTimeout: '30s',
    tlsEnabled: false,
    tlsCertFile: '',
    tlsKeyFile: '',
    ...tlsVersions(),
  },
  xdsServer: {
    dataplaneConfigurationRefreshInterval: '1s',
    dataplaneStatusFlushInterval: '10s',
    dataplaneDeregistrationDelay: '10s',
    nackBackoff: '5s',
  },
  apiServer: {
    readOnly: false,
    corsAllowedDomains: ['.*'],
    http: { enabled: true, interface: '0.0.0.0', port: 5681 },
    https: {
      enabled: true,
      interface: '0.0.0.0',
      port: 5682,
      tlsCertFile: '',
      tlsKeyFile: '',
      tlsCaFile: '',
      ...tlsVersions(),
      requireClientCert: false,
    },
    auth: { clientCertsDir: '' },
    authn: {
      type: 'tokens',
      localhostIsAdmin: true,
      tokens: { bootstrapAdminToken: true, enableIssuer: true, validator: { useSecrets: true } },
    },
    rootUrl: '',
    basePath: '/',
    gui: { enabled: true, rootUrl: '', basePath: '/gui' },
    // This control plane's own limits (docs/api.md, Limits): how long a client may take to send its
    // request line and headers, then its whole request; the largest body, in bytes; requests served
    // at once (0: no limit).
    readHeaderTimeout: '5s',
    readTimeout: '1m0s',
    maxRequestBodySize: 8388608,
    maxConcurrentRequests: 1000,
  },
  runtime: {
    shutdownTimeout: '10s',
    // How far the JavaScript heap may grow past the data it holds after a full collection, in percent (0: the engine decides, up to 4x): docs/architecture.md, Memory.
    heapGrowthPercent: 100,
    kubernetes: {
      controlPlaneServiceName: 'mesh-control-plane',
      serviceAccountName: 'system:serviceaccount:mesh-system:mesh-control-plane',
      nodeTaintController: { enabled: false, cniApp: '', cniNamespace: 'kube-system' },
      admissionServer: { address: '', port: 5443, certDir: '' },
      injector: {
        cniEnabled: false,
        virtualProbesEnabled: true,
        virtualProbesPort: 9000,
        caCertFile: '',
        sidecarContainer: {
          image: 'mesh/mesh-dp:latest',
          redirectPortInbound: 15006,
          redirectPortInboundV6: 15010,
          redirectPortOutbound: 15001,
          uid: 5678,
          gid: 5678,
          drainTime: '30s',
          readinessProbe: { initialDelaySeconds: 1, timeoutSeconds: 3, periodSeconds: 5, successThreshold: 1, failureThreshold: 12 },
          livenessProbe: { initialDelaySeconds: 60, timeoutSeconds: 3, periodSeconds: 5, failureThreshold: 12 },
          waitForDataplaneReady: false,
        },
        initContainer: { image: 'mesh/mesh-init:latest' },
        builtinDNS: { enabled: true, port: 15053 },
        ebpf: {
          enabled: false,
          instanceIPEnvVarName: 'INSTANCE_IP',
          bpffsPath: '/sys/fs/bpf',
          cgroupPath: '/sys/fs/cgroup',
          tcAttachIface: '',
          programsSourcePath: '/mesh/ebpf',
        },
      },
      marshalingCacheExpirationTime: '5m0s',
      controllersConcurrency: { podController: 10 },
      clientConfig: { qps: 100, burstQps: 100 },
      leaderElection: { leaseDuration: '15s', renewDeadline: '10s' },
    },
    universal: { dataplaneCleanupAge: '72h0m0s' },
  },
  defaults: { skipMeshCreation: false, skipTenantResources: false },
  metrics: {
    dataplane: { subscriptionLimit: 2, idleTimeout: '5m0s' },
    zone: { subscriptionLimit: 10, idleTimeout: '5m0s', compactFinishedSubscriptions: false },
    mesh: { minResyncInterval: '1s', fullResyncInterval: '20s', bufferSize: 1000, eventProcessors: 1 },
    controlPlane: { reportResourcesCount: true },
  },
  reports: { enabled: false },
  dnsServer: { domain: 'mesh', CIDR: '240.0.0.0/4', serviceVipEnabled: true, serviceVipPort: 80 },
  multizone: {
    global: {
      kds: {
        grpcPort: 5685,
        refreshInterval: '1s',
        zoneInsightFlushInterval: '10s',
        tlsEnabled: true,
        tlsCertFile: '',
        tlsKeyFile: '',
        ...tlsVersions(),
        maxMsgSize: 10485760,
        msgSendTimeout: '1m0s',
        nackBackoff: '5s',
        disableSOTW: false,
        responseBackoff: '0s',
        zoneHealthCheck: { pollInterval: '0s', timeout: '0s' },
        // Zones present a zone token of scope `cp` when `zoneToken` (docs/multizone.md, Authentication).
        authn: { type: 'none' },
      },
    },
    zone: {
      name: '',
      globalAddress: '',
      kds: {
        refreshInterval: '1s',
        rootCaFile: '',
        tlsSkipVerify: false,
        maxMsgSize: 10485760,
        msgSendTimeout: '1m0s',
        nackBackoff: '5s',
        responseBackoff: '0s',
        authn: { zoneTokenFile: '' },
      },
    },
  },
  diagnostics: {
    serverPort: 5680,
    debugEndpoints: false,
    tlsEnabled: false,
    tlsCertFile: '',
    tlsKeyFile: '',
    ...tlsVersions(),
  },
  dpServer: {
    port: 5678,
    // Plain text (`false`) is for local use and tests: tokens then travel in the clear (docs/xds.md).
    tls: { enabled: true },
    tlsCertFile: '',
    tlsKeyFile: '',
    ...tlsVersions(),
    readHeaderTimeout: '5s',
    auth: { type: '', useTokenPath: false },
    authn: {
      // `dpToken` / `zoneToken` (the reference's Universal defaults) or `none` (no check).
      dpProxy: { type: 'dpToken', dpToken: { enableIssuer: true, validator: { useSecrets: true } } },
      zoneProxy: { type: 'zoneToken', zoneToken: { enableIssuer: true, validator: { useSecrets: true } } },
      enableReloadableTokens: false,
    },
    hds: {
      enabled: true,
      interval: '5s',
      refreshInterval: '10s',
      checkDefaults: { timeout: '2s', interval: '1s', noTrafficInterval: '1s', healthyThreshold: 1, unhealthyThreshold: 1 },
    },
  },
  interCp: {
    catalog: { instanceAddress: '', heartbeatInterval: '5s', writerInterval: '15s' },
    server: { port: 5683, ...tlsVersions() },
  },
  access: {
    type: 'static',
    static: {
      adminResources: admins(),
      generateDpToken: admins(),
      generateUserToken: admins(),
      generateZoneToken: admins(),
      // Configuration dumps show what proxies are given: admins only (docs/tokens.md).
      viewConfigDump: admins(),
      viewStats: everyone(),
      viewClusters: everyone(),
    },
  },
  experimental: {
    gatewayAPI: false,
    kubeOutboundsAsVIPs: true,
    useTagFirstVirtualOutboundModel: false,
    kdsDeltaEnabled: true,
    ingressTagFilters: [],
    kdsEventBasedWatchdog: { enabled: false, flushInterval: '5s', fullResyncInterval: '1m0s', delayFullResync: false },
    autoReachableServices: false,
    kdsSyncNameWithHashSuffix: false,
  },
  proxy: { gateway: { globalDownstreamMaxConnections: 50000 } },
  tracing: { openTelemetry: { enabled: false, endpoint: '' } },
  eventBus: { bufferSize: 100 },
};
