// Loading the configuration (defaults, YAML file, MESH_* variables) and the view `/config` shows.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiServerOptions } from './api-server.js';
import { ConfigError, configKeys, DEFAULT_MESH_DEFINITION, effectiveConfig, formatGoDuration, loadConfig, MASK } from './config.js';

const load = (env: Record<string, string> = {}, yaml?: string) => {
  if (yaml === undefined) return loadConfig({ env });
  const file = join(mkdtempSync(join(tmpdir(), 'mesh-config-')), 'config.yaml');
  writeFileSync(file, yaml);
  return loadConfig({ env, configFile: file });
};

const shown = (env: Record<string, string> = {}) => effectiveConfig(load(env)) as Record<string, any>;

describe('defaults', () => {
  it('are the reference 2.5.0 defaults, with this control plane store and work directory', () => {
    const config = load();
    expect(config).toMatchObject({
      environment: 'universal',
      mode: 'standalone',
      general: { workDir: join(homedir(), '.mesh'), advertisedHostname: 'localhost', dnsCacheTTL: '10s' },
      store: {
        type: 'sqlite',
        sqlite: { path: join(homedir(), '.mesh', 'mesh.db') },
        kubernetes: { systemNamespace: 'mesh-system' },
        postgres: { host: '127.0.0.1', port: 15432, user: 'mesh', password: 'mesh', dbName: 'mesh', connectionTimeout: 5, maxConnectionLifetime: '1h0m0s' },
        unsafeDelete: false,
      },
      apiServer: {
        readOnly: false,
        corsAllowedDomains: ['.*'],
        http: { enabled: true, interface: '0.0.0.0', port: 5681 },
        https: { enabled: true, port: 5682, requireClientCert: false },
        authn: { type: 'tokens', localhostIsAdmin: true },
        gui: { enabled: true, rootUrl: '', basePath: '/gui' },
      },
      bootstrapServer: { params: { adminAddress: '127.0.0.1', adminPort: 9901, xdsConnectTimeout: '1s' } },
      xdsServer: { dataplaneConfigurationRefreshInterval: '1s', dataplaneStatusFlushInterval: '10s' },
      dpServer: { port: 5678 },
      diagnostics: { serverPort: 5680, debugEndpoints: false },
      multizone: { global: { kds: { grpcPort: 5685, msgSendTimeout: '1m0s' } }, zone: { name: '', globalAddress: '' } },
      runtime: { shutdownTimeout: '10s', kubernetes: { admissionServer: { address: '', port: 5443, certDir: '' } }, universal: { dataplaneCleanupAge: '72h0m0s' } },
      defaults: { skipMeshCreation: false, skipTenantResources: false },
      reports: { enabled: false },
      access: { type: 'static', static: { adminResources: { users: ['mesh-system:admin'], groups: ['mesh-system:admin'] } } },
      eventBus: { bufferSize: 100 },
    });
  });

  it('give every key its own environment variable', () => {
    const names = configKeys().map((key) => key.env);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['MESH_API_SERVER_HTTP_PORT', 'MESH_STORE_SQLITE_PATH', 'MESH_DNS_SERVER_CIDR', 'MESH_GENERAL_DNS_CACHE_TTL']));
  });

  it('keep sections apart: a setting written into one does not show up in another', () => {
    const config = load({ MESH_ACCESS_STATIC_ADMIN_RESOURCES_USERS: 'alice' });
    expect(config.access.static.adminResources.users).toEqual(['alice']);
    expect(config.access.static.generateDpToken.users).toEqual(['mesh-system:admin']);
  });
});

describe('environment variables', () => {
  it('refuse a MESH_* variable that names no configuration key, naming the closest key and its variable when it looks misspelt', () => {
    expect(() => load({ MESH_API_SERVR_HTTP_PORT: '6681' })).toThrow('MESH_API_SERVR_HTTP_PORT: names no configuration key; did you mean apiServer.http.port (MESH_API_SERVER_HTTP_PORT)?');
    expect(() => load({ MESH_TELEMETRY: 'on' })).toThrow(
      'MESH_TELEMETRY: names no configuration key (each MESH_* variable is a key path in upper snake case, such as MESH_API_SERVER_HTTP_PORT)',
    );
    expect(() => load({ MESH_TELEMETRY: 'on', MESH_TRACING: 'on' })).toThrow('MESH_TELEMETRY, MESH_TRACING: name no configuration key');
  });

  it('set numbers, strings and paths (the existing variables keep working)', () => {
    const config = load({
      MESH_API_SERVER_HTTP_PORT: '6681',
      MESH_API_SERVER_HTTPS_PORT: '6682',
      MESH_ENVIRONMENT: 'kubernetes',
      MESH_MODE: 'zone',
      MESH_MULTIZONE_ZONE_NAME: 'zone-1',
      MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: 'grpcs://global:5685',
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
      MESH_STORE_TYPE: 'memory',
      MESH_STORE_SQLITE_PATH: '/tmp/other.db',
      MESH_DIAGNOSTICS_SERVER_PORT: '6680',
      MESH_GENERAL_WORK_DIR: '/tmp/mesh-work',
    });
    expect(config.apiServer.http.port).toBe(6681);
    expect(config.apiServer.https.port).toBe(6682);
    expect(config.environment).toBe('kubernetes');
    expect(config.mode).toBe('zone');
    expect(config.multizone.zone).toMatchObject({ name: 'zone-1', globalAddress: 'grpcs://global:5685' });
    expect(config.multizone.global.kds.grpcPort).toBe(0);
    expect(config.store.type).toBe('memory');
    expect(config.store.sqlite.path).toBe('/tmp/other.db');
    expect(config.diagnostics.serverPort).toBe(6680);
    expect(config.general.workDir).toBe('/tmp/mesh-work');
  });

  it('set booleans, case-insensitively', () => {
    expect(load({ MESH_API_SERVER_READ_ONLY: 'TRUE', MESH_DEFAULTS_SKIP_MESH_CREATION: 'true' })).toMatchObject({
      apiServer: { readOnly: true },
      defaults: { skipMeshCreation: true },
    });
    expect(load({ MESH_API_SERVER_GUI_ENABLED: 'false' }).apiServer.gui.enabled).toBe(false);
  });

  it('set lists as comma-separated values', () => {
    expect(load({ MESH_API_SERVER_CORS_ALLOWED_DOMAINS: 'https://a.example, https://b.example,' }).apiServer.corsAllowedDomains).toEqual([
      'https://a.example',
      'https://b.example',
    ]);
    expect(load({ MESH_EXPERIMENTAL_INGRESS_TAG_FILTERS: '' }).experimental.ingressTagFilters).toEqual([]);
  });

  it('set durations, shown the way Go prints them', () => {
    const config = load({ MESH_XDS_SERVER_NACK_BACKOFF: '90s', MESH_STORE_CACHE_EXPIRATION_TIME: '0.5s', MESH_RUNTIME_SHUTDOWN_TIMEOUT: '2m' });
    expect(config.xdsServer.nackBackoff).toBe('1m30s');
    expect(config.store.cache.expirationTime).toBe('500ms');
    expect(config.runtime.shutdownTimeout).toBe('2m0s');
  });

  it('win over the configuration file', () => {
    expect(load({ MESH_API_SERVER_HTTP_PORT: '7000' }, 'apiServer:\n  http:\n    port: 6000\n').apiServer.http.port).toBe(7000);
  });

  it.each([
    [{ MESH_API_SERVER_HTTP_PORT: 'http' }, 'apiServer.http.port (MESH_API_SERVER_HTTP_PORT): expected an integer, got "http"'],
    [{ MESH_API_SERVER_READ_ONLY: 'yes' }, 'apiServer.readOnly (MESH_API_SERVER_READ_ONLY): expected true or false, got "yes"'],
    [{ MESH_XDS_SERVER_NACK_BACKOFF: 'soon' }, 'xdsServer.nackBackoff (MESH_XDS_SERVER_NACK_BACKOFF): expected a duration such as 10s, 500ms or 1m30s, got "soon"'],
    [{ MESH_API_SERVER_HTTP_PORT: '70000' }, 'apiServer.http.port (MESH_API_SERVER_HTTP_PORT): port must be in the range [0, 65535], got 70000'],
    [{ MESH_DP_SERVER_PORT: '-1' }, 'dpServer.port (MESH_DP_SERVER_PORT): port must be in the range [0, 65535], got -1'],
    [{ MESH_ENVIRONMENT: 'mainframe' }, 'environment (MESH_ENVIRONMENT): must be one of universal, kubernetes, got "mainframe"'],
    [{ MESH_MODE: 'primary' }, 'mode (MESH_MODE): must be one of standalone, global, zone, got "primary"'],
    [{ MESH_STORE_TYPE: 'mysql' }, 'store.type (MESH_STORE_TYPE): must be one of sqlite, memory, postgres, got "mysql"'],
    [{ MESH_MODE: 'zone' }, 'multizone.zone.name (MESH_MULTIZONE_ZONE_NAME): a zone control plane needs a zone name'],
    [{ MESH_MODE: 'zone', MESH_MULTIZONE_ZONE_NAME: 'Zone_1', MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: 'grpcs://g:5685' }, 'multizone.zone.name (MESH_MULTIZONE_ZONE_NAME): "Zone_1" is not a valid zone name'],
    [{ MESH_MODE: 'zone', MESH_MULTIZONE_ZONE_NAME: 'east' }, "multizone.zone.globalAddress (MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS): a zone control plane needs its global's sync address"],
    [
      { MESH_MODE: 'zone', MESH_MULTIZONE_ZONE_NAME: 'east', MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: 'tcp://g:5685' },
      'multizone.zone.globalAddress (MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS): unsupported scheme "tcp" in zone GlobalAddress',
    ],
    [{ MESH_MULTIZONE_GLOBAL_KDS_TLS_KEY_FILE: '/k.pem' }, 'multizone.global.kds.tlsCertFile (MESH_MULTIZONE_GLOBAL_KDS_TLS_CERT_FILE): cannot be empty if tlsKeyFile has been set'],
    [{ MESH_MULTIZONE_GLOBAL_KDS_AUTHN_TYPE: 'password' }, 'multizone.global.kds.authn.type (MESH_MULTIZONE_GLOBAL_KDS_AUTHN_TYPE): expected "zoneToken" or "none", got "password"'],
    [{ MESH_DNS_SERVER_CIDR: '240.0.0.0' }, 'dnsServer.CIDR (MESH_DNS_SERVER_CIDR): must be an IPv4 CIDR such as 240.0.0.0/4, got "240.0.0.0"'],
    [{ MESH_DNS_SERVER_CIDR: 'fd00::/8' }, 'dnsServer.CIDR (MESH_DNS_SERVER_CIDR): must be an IPv4 CIDR such as 240.0.0.0/4, got "fd00::/8"'],
    [{ MESH_DNS_SERVER_SERVICE_VIP_PORT: '0' }, "dnsServer.serviceVipPort (MESH_DNS_SERVER_SERVICE_VIP_PORT): port can't be 0"],
  ])('refuse a bad value, naming its key and its variable: %j', (env, message) => {
    expect(() => load(env)).toThrow(message);
  });

  it('carry the key and the variable of a refused value on the error, for the log line', () => {
    let refused: unknown;
    try {
      load({ MESH_XDS_SERVER_NACK_BACKOFF: 'soon' });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused).toMatchObject({ setting: 'xdsServer.nackBackoff', variable: 'MESH_XDS_SERVER_NACK_BACKOFF' });
  });
});

describe('configuration file', () => {
  it('sets values at any depth and keeps the defaults of keys it leaves out', () => {
    const config = load(
      {},
      [
        'mode: global',
        'apiServer:',
        '  readOnly: true',
        '  corsAllowedDomains: ["https://gui.example"]',
        '  https:',
        '    enabled: false',
        'store:',
        '  postgres:',
        '    host: db.example',
        '    port: "5432"',
        'dpServer:',
        '  hds:',
        '    checkDefaults:',
        '      timeout: 1500ms',
      ].join('\n'),
    );
    expect(config.mode).toBe('global');
    expect(config.apiServer).toMatchObject({ readOnly: true, corsAllowedDomains: ['https://gui.example'], http: { port: 5681 }, https: { enabled: false, port: 5682 } });
    expect(config.store.postgres).toMatchObject({ host: 'db.example', port: 5432, user: 'mesh' });
    expect(config.dpServer.hds.checkDefaults.timeout).toBe('1.5s');
  });

  it('loads the reference layout, where an empty value keeps the default', () => {
    const config = load({}, 'general:\n  tlsCertFile:\n  tlsMaxVersion:\nmultizone:\n  zone:\n    globalAddress:\n');
    expect(config.general.tlsCertFile).toBe('');
    expect(config.multizone.zone.globalAddress).toBe('');
  });

  it('may be empty', () => {
    expect(load({}, '').apiServer.http.port).toBe(5681);
  });

  it.each([
    ['apiServer:\n  bogus: 1\n', 'apiServer.bogus: unknown configuration key'],
    ['apiServer:\n  readOnlyy: true\n', 'apiServer.readOnlyy: unknown configuration key; did you mean apiServer.readOnly (MESH_API_SERVER_READ_ONLY)?'],
    ['telemetry: {}\n', 'telemetry: unknown configuration key'],
    ['apiServer:\n  port: 6000\n', 'apiServer.port: shown by /config for older clients and not a setting; set apiServer.http.port instead'],
    ['xdsServer:\n  grpcPort: 6000\n', 'xdsServer.grpcPort: shown by /config for older clients and not a setting; set dpServer.port instead'],
    ['adminServer:\n  local:\n    port: 5679\n', 'adminServer: shown by /config for older clients and not a setting'],
    ['defaults:\n  mesh: "type: Mesh"\n', 'defaults.mesh: shown by /config for older clients and not a setting'],
    ['apiServer:\n  http: 5681\n', 'apiServer.http: expected a mapping'],
    ['apiServer:\n  corsAllowedDomains: ".*"\n', 'apiServer.corsAllowedDomains (MESH_API_SERVER_CORS_ALLOWED_DOMAINS): expected a list of strings'],
    ['apiServer:\n  http:\n    port: [1]\n', 'apiServer.http.port (MESH_API_SERVER_HTTP_PORT): expected a number'],
    ['apiServer:\n  http:\n    port: 56.81\n', 'apiServer.http.port (MESH_API_SERVER_HTTP_PORT): expected an integer, got "56.81"'],
    ['apiServer:\n  readOnly: sometimes\n', 'apiServer.readOnly (MESH_API_SERVER_READ_ONLY): expected true or false, got "sometimes"'],
    ['xdsServer:\n  nackBackoff: 5\n', 'xdsServer.nackBackoff (MESH_XDS_SERVER_NACK_BACKOFF): expected a duration such as 10s, 500ms or 1m30s, got "5"'],
    ['- a list\n', 'expected a YAML mapping at the top level'],
    ['apiServer: [\n', 'cannot read configuration file'],
  ])('refuses %j', (yaml, message) => {
    expect(() => load({}, yaml)).toThrow(message);
  });

  it('names a file it cannot read', () => {
    expect(() => loadConfig({ env: {}, configFile: '/nonexistent/mesh.yaml' })).toThrow('cannot read configuration file /nonexistent/mesh.yaml');
  });
});

describe('effective configuration (/config)', () => {
  it('shows every key of the older layout and of the 2.5.0 layout', () => {
    const config = shown();
    expect(Object.keys(config).sort()).toEqual(
      expect.arrayContaining([
        'access',
        'adminServer',
        'apiServer',
        'bootstrapServer',
        'dataplaneTokenServer',
        'defaults',
        'diagnostics',
        'discovery',
        'dnsServer',
        'dpServer',
        'environment',
        'eventBus',
        'experimental',
        'general',
        'guiServer',
        'interCp',
        'metrics',
        'mode',
        'monitoringAssignmentServer',
        'multizone',
        'proxy',
        'reports',
        'runtime',
        'sdsServer',
        'store',
        'tracing',
        'xdsServer',
      ]),
    );
    expect(config.apiServer).toMatchObject({ corsAllowedDomains: ['.*'], port: 5681, readOnly: false });
    expect(config.bootstrapServer).toMatchObject({ params: { adminPort: 9901 }, port: 5678 });
    expect(config.defaults).toEqual({ skipMeshCreation: false, skipTenantResources: false, mesh: DEFAULT_MESH_DEFINITION });
    expect(config.general.advertisedHostname).toBe('localhost');
    expect(config.reports).toEqual({ enabled: false });
    expect(config.runtime.kubernetes.admissionServer).toEqual({ address: '', port: 5443, certDir: '' });
    expect(config.store).toMatchObject({ type: 'sqlite', kubernetes: { systemNamespace: 'mesh-system' } });
    expect(Object.keys(config.store.postgres)).toEqual(expect.arrayContaining(['connectionTimeout', 'dbName', 'host', 'password', 'port', 'user']));
    expect(config.xdsServer).toMatchObject({ dataplaneConfigurationRefreshInterval: '1s', dataplaneStatusFlushInterval: '10s', diagnosticsPort: 5680, grpcPort: 5678 });
    expect(config.adminServer).toEqual({
      local: { port: 5681 },
      public: { enabled: true, interface: '0.0.0.0', port: 5682, tlsCertFile: '', tlsKeyFile: '', clientCertsDir: '' },
      apis: { dataplaneToken: { enabled: true } },
    });
    expect(config.dataplaneTokenServer).toMatchObject({ enabled: true, local: { port: 5681 }, public: { port: 5682 } });
    expect(config.discovery).toEqual({ universal: { pollingInterval: '1s' } });
    expect(config.guiServer).toEqual({ port: 5681, apiServerUrl: '' });
    expect(config.sdsServer).toEqual({ grpcPort: 5678, tlsCertFile: '', tlsKeyFile: '' });
  });

  it('computes the older keys from the settings that replaced them', () => {
    const config = shown({
      MESH_API_SERVER_HTTP_PORT: '6681',
      MESH_API_SERVER_HTTPS_PORT: '6682',
      MESH_API_SERVER_HTTPS_TLS_CERT_FILE: '/etc/mesh/api.crt',
      MESH_DP_SERVER_PORT: '6678',
      MESH_DIAGNOSTICS_SERVER_PORT: '6680',
      MESH_XDS_SERVER_DATAPLANE_CONFIGURATION_REFRESH_INTERVAL: '2s',
    });
    expect(config.apiServer.port).toBe(6681);
    expect(config.adminServer.local.port).toBe(6681);
    expect(config.adminServer.public).toMatchObject({ port: 6682, tlsCertFile: '/etc/mesh/api.crt' });
    expect(config.guiServer.port).toBe(6681);
    expect(config.bootstrapServer.port).toBe(6678);
    expect(config.sdsServer.grpcPort).toBe(6678);
    expect(config.xdsServer).toMatchObject({ grpcPort: 6678, diagnosticsPort: 6680 });
    expect(config.discovery.universal.pollingInterval).toBe('2s');
  });

  it('adds the older keys beside the settings, never over one', () => {
    const settings = new Set(configKeys().map(({ path }) => path.join('.')));
    const flatten = (tree: Record<string, any>, prefix = ''): string[] =>
      Object.entries(tree).flatMap(([key, value]) =>
        value !== null && typeof value === 'object' && !Array.isArray(value) ? flatten(value, `${prefix}${key}.`) : [`${prefix}${key}`],
      );
    const added = flatten(shown()).filter((key) => !settings.has(key));
    expect(added.length).toBeGreaterThan(0);
    for (const key of added) expect(() => load({}, `${key.split('.').map((part, i) => `${'  '.repeat(i)}${part}:`).join('\n')} 1\n`)).toThrow('shown by /config');
  });

  it('masks the database password, whatever its value', () => {
    const config = shown({ MESH_STORE_POSTGRES_PASSWORD: 'hunter2' });
    expect(config.store.postgres.password).toBe(MASK);
    expect(JSON.stringify(config)).not.toContain('hunter2');
    expect(shown().store.postgres.password).toBe('*****');
  });

  it('leaves the configuration the process runs with untouched', () => {
    const config = load({ MESH_STORE_POSTGRES_PASSWORD: 'hunter2' });
    effectiveConfig(config);
    expect(config.store.postgres.password).toBe('hunter2');
    expect(config.apiServer).not.toHaveProperty('port');
  });
});

describe('formatGoDuration', () => {
  it.each([
    [0, '0s'],
    [1, '1ns'],
    [1500, '1.5µs'],
    [250e6, '250ms'],
    [1e9, '1s'],
    [1.5e9, '1.5s'],
    [90e9, '1m30s'],
    [300e9, '5m0s'],
    [3600e9, '1h0m0s'],
    [72 * 3600e9, '72h0m0s'],
    [3661.5e9, '1h1m1.5s'],
    [-2e9, '-2s'],
  ])('%d ns is %s', (nanos, text) => {
    expect(formatGoDuration(nanos)).toBe(text);
  });
});

describe('limits (docs/api.md, Limits)', () => {
  it('default to a 5 s header read, a 1 min request read, 8 MiB bodies, 1000 requests at once and no cap on the database', () => {
    expect(load().apiServer).toMatchObject({ readHeaderTimeout: '5s', readTimeout: '1m0s', maxRequestBodySize: 8388608, maxConcurrentRequests: 1000 });
    expect(load().store.sqlite.maxSize).toBe(0);
  });

  it('bound the heap to twice the live data by default (docs/architecture.md, Memory)', () => {
    expect(load().runtime.heapGrowthPercent).toBe(100);
    expect(shown({ MESH_RUNTIME_HEAP_GROWTH_PERCENT: '0' }).runtime.heapGrowthPercent).toBe(0);
  });

  it('are set by their variables and shown by /config', () => {
    const env = {
      MESH_API_SERVER_READ_HEADER_TIMEOUT: '2s',
      MESH_API_SERVER_READ_TIMEOUT: '30s',
      MESH_API_SERVER_MAX_REQUEST_BODY_SIZE: '1024',
      MESH_API_SERVER_MAX_CONCURRENT_REQUESTS: '0',
      MESH_STORE_SQLITE_MAX_SIZE: '1048576',
    };
    expect(shown(env).apiServer).toMatchObject({ readHeaderTimeout: '2s', readTimeout: '30s', maxRequestBodySize: 1024, maxConcurrentRequests: 0 });
    expect(shown(env).store.sqlite.maxSize).toBe(1048576);
  });

  it.each([
    [{ MESH_API_SERVER_READ_HEADER_TIMEOUT: '2m' }, 'apiServer.readHeaderTimeout (MESH_API_SERVER_READ_HEADER_TIMEOUT): must be at most apiServer.readTimeout (1m0s), got 2m0s'],
    [{ MESH_API_SERVER_READ_TIMEOUT: '-1s' }, 'apiServer.readTimeout (MESH_API_SERVER_READ_TIMEOUT): cannot be negative, got -1s'],
    [{ MESH_API_SERVER_MAX_REQUEST_BODY_SIZE: '0' }, 'apiServer.maxRequestBodySize (MESH_API_SERVER_MAX_REQUEST_BODY_SIZE): must be a positive number of bytes, got 0'],
    [{ MESH_API_SERVER_MAX_CONCURRENT_REQUESTS: '-5' }, 'apiServer.maxConcurrentRequests (MESH_API_SERVER_MAX_CONCURRENT_REQUESTS): cannot be negative (0 means no limit), got -5'],
    [{ MESH_STORE_SQLITE_MAX_SIZE: '-1' }, 'store.sqlite.maxSize (MESH_STORE_SQLITE_MAX_SIZE): cannot be negative (0 means no cap), got -1'],
    [{ MESH_RUNTIME_HEAP_GROWTH_PERCENT: '-1' }, 'runtime.heapGrowthPercent (MESH_RUNTIME_HEAP_GROWTH_PERCENT): must be a whole number in the range [0, 1000] (0 leaves it to the engine), got -1'],
    [{ MESH_RUNTIME_HEAP_GROWTH_PERCENT: '5000' }, 'runtime.heapGrowthPercent (MESH_RUNTIME_HEAP_GROWTH_PERCENT): must be a whole number in the range [0, 1000] (0 leaves it to the engine), got 5000'],
  ])('refuse %j', (env, message) => {
    expect(() => load(env)).toThrow(message);
  });

  it('become the API servers’ timeouts, checked often enough to cut a slow client close to its timeout', () => {
    expect(apiServerOptions(load())).toEqual({ headersTimeout: 5000, requestTimeout: 60_000, connectionsCheckingInterval: 1000 });
    expect(apiServerOptions(load({ MESH_API_SERVER_READ_HEADER_TIMEOUT: '1s', MESH_API_SERVER_READ_TIMEOUT: '2s' }))).toEqual({ headersTimeout: 1000, requestTimeout: 2000, connectionsCheckingInterval: 500 });
    expect(apiServerOptions(load({ MESH_API_SERVER_READ_HEADER_TIMEOUT: '0s', MESH_API_SERVER_READ_TIMEOUT: '0s' }))).toEqual({ headersTimeout: 0, requestTimeout: 0, connectionsCheckingInterval: 1000 });
  });
});
