// The `/xds` inspection document (docs/xds.md, Inspection) rendered from what the control plane generated, in the
// shape of Envoy's admin `/config_dump`: the bootstrap's node, then every dynamic resource by type.
import { dataplaneKind, dataplaneTagSets, SERVICE_TAG } from '@mesh/model';
import type { DataplaneResource } from '@mesh/policy-matcher';
import { type JsonObject, TYPE, type TypedObject } from './envoy.js';
import type { ZoneEgressResource, ZoneIngressResource } from './mesh-context.js';
import type { ProxyConfig } from './proxy.js';

export interface ConfigDump {
  readonly configs: TypedObject[];
}

/** The sections of a dump holding resources sent over xDS, one per resource type. */
export type ConfigDumpSection = 'listeners' | 'clusters' | 'endpoints' | 'routes' | 'secrets';

/** Version info of each xDS type as last sent, when each was sent, and what the proxy reported. */
export interface ConfigDumpOptions {
  readonly versions?: Readonly<Partial<Record<ConfigDumpSection, string>>>;
  /**
   * RFC 3339, per section: when the resources of its type were last sent, and for the bootstrap
   * when the proxy reported its node; a section without one leaves `lastUpdated` out.
   */
  readonly lastUpdated?: Readonly<Partial<Record<ConfigDumpSection | 'bootstrap', string>>>;
  /** The node metadata of the proxy's last xDS request; non-string values are kept as JSON text. */
  readonly nodeMetadata?: Readonly<Record<string, unknown>>;
  /** Envoy's admin port, reported as `dataplane.admin.port` unless the node metadata has it. */
  readonly adminPort?: number;
}

const REDACTED = '[redacted]';

/** Node metadata as strings only (the API documents it as a string map). */
function stringMetadata(defaults: Record<string, string>, reported: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const metadata = { ...defaults };
  for (const [key, value] of Object.entries(reported ?? {})) {
    if (value === undefined) continue;
    metadata[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return metadata;
}

/** Fields Envoy's own admin redacts in its config dump: key material, wherever it sits. */
const SENSITIVE_FIELDS = new Set(['privateKey', 'sessionTicketKeys', 'hmacSecret', 'secret', 'password']);

/**
 * Private keys and secret data never leave the control plane, even in a dump: every sensitive
 * field given inline (a data source with `inlineBytes`/`inlineString`) shows `[redacted]`, as
 * Envoy's admin shows it; file names and references stay.
 */
function redactSensitive<T>(value: T): T {
  if (Array.isArray(value)) return value.map(redactSensitive) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [key, field] of Object.entries(value as JsonObject)) {
    out[key] = SENSITIVE_FIELDS.has(key) && isInlineData(field) ? { inlineString: REDACTED } : redactSensitive(field);
  }
  return out as T;
}

const isInlineData = (field: unknown): boolean =>
  field !== null && typeof field === 'object' && !Array.isArray(field) && ('inlineBytes' in field || 'inlineString' in field);

function renderDump(node: JsonObject, config: ProxyConfig, options: ConfigDumpOptions): ConfigDump {
  const versions = options.versions ?? {};
  const times = options.lastUpdated ?? {};
  const updated = (section: ConfigDumpSection | 'bootstrap'): JsonObject => (times[section] === undefined ? {} : { lastUpdated: times[section] });
  const versionOf = (section: ConfigDumpSection): JsonObject => (versions[section] ? { versionInfo: versions[section] } : {});
  return {
    configs: [
      { '@type': TYPE.bootstrapDump, bootstrap: { node }, ...updated('bootstrap') },
      {
        '@type': TYPE.clustersDump,
        ...versionOf('clusters'),
        dynamicActiveClusters: config.clusters.map((cluster) => ({ ...versionOf('clusters'), cluster: redactSensitive(cluster), ...updated('clusters') })),
      },
      {
        '@type': TYPE.endpointsDump,
        dynamicEndpointConfigs: config.endpoints.map((endpointConfig) => ({ ...versionOf('endpoints'), endpointConfig, ...updated('endpoints') })),
      },
      {
        '@type': TYPE.listenersDump,
        ...versionOf('listeners'),
        dynamicListeners: config.listeners.map((listener) => ({
          name: listener.name,
          activeState: { ...versionOf('listeners'), listener: redactSensitive(listener), ...updated('listeners') },
        })),
      },
      // Route configurations sent over RDS: a builtin gateway's listeners name theirs, a ProxyTemplate may add raw ones; a sidecar's are inline in its listeners.
      {
        '@type': TYPE.routesDump,
        ...(config.routes.length > 0 ? { dynamicRouteConfigs: config.routes.map((routeConfig) => ({ ...versionOf('routes'), routeConfig, ...updated('routes') })) } : {}),
      },
      {
        '@type': TYPE.secretsDump,
        dynamicActiveSecrets: config.secrets.map((secret) => ({ name: secret.name, ...versionOf('secrets'), secret: redactSensitive(secret), ...updated('secrets') })),
      },
    ],
  };
}

/** A dataplane's dump: node `<mesh>.<name>`, cluster its first service in name order. */
export function renderDataplaneConfigDump(dataplane: DataplaneResource, config: ProxyConfig, options: ConfigDumpOptions = {}): ConfigDump {
  const services = dataplaneTagSets(dataplane.spec)
    .map((tags) => tags[SERVICE_TAG])
    .filter((service): service is string => service !== undefined)
    .sort();
  const adminPort = options.adminPort ?? dataplane.spec.networking?.admin?.port ?? 9901;
  const resource = JSON.stringify({ type: dataplaneKind.name, mesh: dataplane.mesh, name: dataplane.name, ...dataplane.spec });
  const metadata = stringMetadata(
    { 'dataplane.admin.port': String(adminPort), 'dataplane.proxyType': 'dataplane', 'dataplane.resource': resource },
    options.nodeMetadata,
  );
  return renderDump({ id: `${dataplane.mesh}.${dataplane.name}`, cluster: services[0] ?? 'unknown', metadata }, config, options);
}

function zoneProxyDump(
  name: string,
  proxyType: 'ingress' | 'egress',
  admin: number | undefined,
  config: ProxyConfig,
  options: ConfigDumpOptions,
): ConfigDump {
  const adminPort = options.adminPort ?? admin ?? 9901;
  const metadata = stringMetadata({ 'dataplane.admin.port': String(adminPort), 'dataplane.proxyType': proxyType }, options.nodeMetadata);
  // Zone proxies belong to no mesh: their id is `.<name>`.
  return renderDump({ id: `.${name}`, cluster: name, metadata }, config, options);
}

export const renderZoneIngressConfigDump = (ingress: ZoneIngressResource, config: ProxyConfig, options: ConfigDumpOptions = {}): ConfigDump =>
  zoneProxyDump(ingress.name, 'ingress', ingress.spec.networking?.admin?.port, config, options);

export const renderZoneEgressConfigDump = (egress: ZoneEgressResource, config: ProxyConfig, options: ConfigDumpOptions = {}): ConfigDump =>
  zoneProxyDump(egress.name, 'egress', egress.spec.networking?.admin?.port, config, options);
