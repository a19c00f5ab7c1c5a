// `POST /bootstrap` (docs/xds.md, Bootstrap): the data plane runner sends its proxy's identity,
// resource, token and versions, and receives the Envoy bootstrap that makes Envoy connect back to
// this server over ADS with that token; plus the runner's own settings. Statuses and messages are
// the reference's: 422 for a missing token or an invalid resource, 400 when the address the
// runner used is not in the server certificate, 404 when the proxy is neither passed nor stored.
import { X509Certificate } from 'node:crypto';
import { dataplanePrometheusSettings, type DataplaneSpec, decodeSpec, getKind, isIpAddress, meshKind, type MeshSpec } from '@mesh/model';
import type { ResourceReader } from '@mesh/store';
import { scalarText } from '@mesh/xds-renderer';
import { z } from 'zod';
import type { Authenticator } from './auth.js';
import { type BootstrapCall, type HttpAnswer, PLAIN_TEXT } from './transport-protocol.js';
import { FEATURE_DELTA_GRPC, METADATA, proxyVersion, RESOURCE_TYPE_OF, type ProxyType } from './proxy-node.js';

export interface BootstrapSettings {
  /** `bootstrapServer.params.*`. */
  adminAddress: string;
  adminPort: number;
  adminAccessLogPath: string;
  xdsHost: string;
  xdsPort: number;
  xdsConnectTimeout: string;
}

export interface BootstrapOptions {
  store: ResourceReader;
  authenticator: Authenticator;
  settings: BootstrapSettings;
  /** The port ADS is served on (when `xdsPort` is 0). */
  port: number;
  /** The server certificate (PEM) when TLS is on: proxies verify this server with it. */
  certificatePem: string | undefined;
  /** `dpServer.hds.enabled`: dataplanes' Envoys check their applications and report to this server. */
  healthChecks: boolean;
}

const text = z.string().max(64 * 1024);
const port = z.number().int().min(0).max(65535);

/** The request, as the reference's runner sends it (our spelling of its product-named fields); other fields are ignored. */
const BootstrapRequestSchema = z.object({
  mesh: text.optional(),
  name: text.optional(),
  proxyType: text.optional(),
  dataplaneToken: text.optional(),
  dataplaneTokenPath: text.optional(),
  dataplaneResource: text.optional(),
  // The reference's runner names its own version `kumaDp`: taken as `meshDp`.
  version: z
    .object({ meshDp: z.record(z.string(), z.unknown()).optional(), kumaDp: z.record(z.string(), z.unknown()).optional(), envoy: z.record(z.string(), z.unknown()).optional() })
    .optional(),
  caCert: text.optional(),
  dynamicMetadata: z.record(z.string(), z.string()).optional(),
  dnsPort: port.optional(),
  emptyDnsPort: port.optional(),
  operatingSystem: text.optional(),
  features: z.array(text).max(100).optional(),
  resources: z.object({ maxHeapSizeBytes: z.number().optional() }).optional(),
  accessLogSocketPath: text.optional(),
  metricsResources: z.object({ socketPath: text.optional(), certPath: text.optional(), keyPath: text.optional() }).optional(),
});
export type BootstrapRequest = z.infer<typeof BootstrapRequestSchema>;

/** A refusal with the reference's status and plain-text body. */
export class BootstrapError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const DP_TOKEN_REQUIRED =
  "Dataplane Token is required. Generate token using 'meshctl generate dataplane-token > /path/file' and provide it via --dataplane-token-file=/path/file argument to mesh-dp";

const NOT_CA =
  "A data plane proxy is trying to verify the control plane using the certificate which is not a certificate authority (basic constraint 'CA' is set to 'false').\n" +
  "Provide CA that was used to sign a certificate used in the control plane by using 'mesh-dp run --ca-cert-file=file' or via MESH_CONTROL_PLANE_CA_CERT_FILE";

function sanMismatch(host: string, sans: readonly string[]): string {
  return (
    `A data plane proxy is trying to connect to the control plane using "${host}" address, but the certificate in the control plane has the following SANs ${JSON.stringify(sans)}. ` +
    'Either change the --cp-address in mesh-dp to one of those or execute the following steps:\n' +
    "1) Generate a new certificate with the address you are trying to use. It is recommended to use trusted Certificate Authority, but you can also generate self-signed certificates using 'meshctl generate tls-certificate --type=server --cp-hostname=" +
    `${host}'\n` +
    '2) Set MESH_GENERAL_TLS_CERT_FILE and MESH_GENERAL_TLS_KEY_FILE or the equivalent in the control plane config file to the new certificate.\n' +
    '3) Restart the control plane to read the new certificate and start mesh-dp.'
  );
}

/** DNS names and IP addresses of a certificate's SAN extension. */
function sansOf(certificatePem: string): string[] {
  const san = new X509Certificate(certificatePem).subjectAltName ?? '';
  return san
    .split(', ')
    .map((entry) => /^(?:DNS|IP Address):(.*)$/.exec(entry)?.[1])
    .filter((value): value is string => value !== undefined)
    .sort();
}

const isCaCertificate = (pem: string): boolean => {
  const certificate = new X509Certificate(pem);
  // A self-signed certificate without basic constraints is trusted as its own anchor.
  return certificate.ca || !/X509v3 Basic Constraints/.test(certificate.toString());
};

const SOCKET_DIR = '/tmp';

export class BootstrapGenerator {
  private readonly sans: ReadonlySet<string>;

  constructor(private readonly options: BootstrapOptions) {
    this.sans = new Set(options.certificatePem ? sansOf(options.certificatePem) : []);
    const { xdsHost } = options.settings;
    if (xdsHost && options.certificatePem && !this.sans.has(xdsHost)) {
      throw new Error(
        `hostname: ${xdsHost} set by MESH_BOOTSTRAP_SERVER_PARAMS_XDS_HOST is not available in the DP Server certificate. Available hostnames: ${JSON.stringify([...this.sans])}. Change the hostname or generate certificate with proper hostname.`,
      );
    }
  }

  /** The response body for a request that came to `host` (the Host header without its port). */
  async generate(request: BootstrapRequest, host: string): Promise<Record<string, unknown>> {
    const { settings, authenticator, certificatePem } = this.options;
    const proxyType = (request.proxyType || 'dataplane') as ProxyType;
    if (!Object.hasOwn(RESOURCE_TYPE_OF, proxyType)) throw new BootstrapError(422, `unknown proxy type ${proxyType}`);
    if (authenticator.requiresToken(proxyType) && !request.dataplaneToken && !request.dataplaneTokenPath) throw new BootstrapError(422, DP_TOKEN_REQUIRED);
    if (!settings.xdsHost && certificatePem && !this.sans.has(host)) throw new BootstrapError(400, sanMismatch(host, [...this.sans]));
    const xdsHost = settings.xdsHost || host;
    const { resource, mesh, name } = await this.proxyResource(request, proxyType);
    const networking = (resource.networking ?? {}) as { admin?: { port?: number }; transparentProxying?: { redirectPortInbound?: number; redirectPortOutbound?: number } };
    const adminPort = networking.admin?.port || settings.adminPort;
    const caPem = this.caCertificate(request);
    const dataplane = proxyType === 'dataplane';
    const services = dataplane ? serviceTagsOf(resource) : [];
    const nodeId = dataplane ? `${mesh}.${name}` : `.${name}`;
    const accessLogSocketPath = request.accessLogSocketPath || `${SOCKET_DIR}/mesh-al-${name}-${mesh}.sock`;
    const metricsSocketPath = request.metricsResources?.socketPath || `${SOCKET_DIR}/mesh-mh-${name}-${mesh}.sock`;
    const version = proxyVersion(request.version);
    const metadata: Record<string, unknown> = {
      [METADATA.version]: { meshDp: version.meshDp ?? {}, envoy: version.envoy ?? {} },
      [METADATA.features]: request.features ?? [],
      [METADATA.accessLogSocketPath]: accessLogSocketPath,
      [METADATA.metricsSocketPath]: metricsSocketPath,
      [METADATA.metricsCertPath]: request.metricsResources?.certPath ?? '',
      [METADATA.metricsKeyPath]: request.metricsResources?.keyPath ?? '',
      [METADATA.adminPort]: String(adminPort),
      [METADATA.adminAddress]: settings.adminAddress,
      [METADATA.proxyType]: proxyType,
    };
    if (request.dataplaneResource) metadata[METADATA.resource] = request.dataplaneResource;
    if (request.dnsPort) metadata[METADATA.dnsPort] = String(request.dnsPort);
    if (request.emptyDnsPort) metadata[METADATA.dnsEmptyPort] = String(request.emptyDnsPort);
    if (request.dynamicMetadata && Object.keys(request.dynamicMetadata).length > 0) metadata.dynamicMetadata = request.dynamicMetadata;
    const adsService: Record<string, unknown> = { envoyGrpc: { clusterName: 'ads_cluster' } };
    if (request.dataplaneToken) adsService.initialMetadata = [{ key: 'authorization', value: request.dataplaneToken.trim() }];
    const adsCluster: Record<string, unknown> = {
      name: 'ads_cluster',
      type: isIpAddress(xdsHost) ? 'STATIC' : 'STRICT_DNS',
      connectTimeout: settings.xdsConnectTimeout,
      lbPolicy: 'ROUND_ROBIN',
      upstreamConnectionOptions: { tcpKeepalive: { keepaliveProbes: 3, keepaliveTime: 10, keepaliveInterval: 10 } },
      typedExtensionProtocolOptions: {
        'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
          '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
          explicitHttpConfig: { http2ProtocolOptions: {} },
        },
      },
      loadAssignment: {
        clusterName: 'ads_cluster',
        endpoints: [{ lbEndpoints: [{ endpoint: { address: { socketAddress: { address: xdsHost, portValue: settings.xdsPort || this.options.port } } } }] }],
      },
    };
    const secrets: unknown[] = [];
    if (certificatePem) {
      adsCluster.transportSocket = {
        name: 'envoy.transport_sockets.tls',
        typedConfig: {
          '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
          sni: xdsHost,
          commonTlsContext: { tlsParams: { tlsMinimumProtocolVersion: 'TLSv1_2' }, validationContextSdsSecretConfig: { name: 'cp_validation_ctx' } },
        },
      };
      secrets.push({
        name: 'cp_validation_ctx',
        validationContext: {
          matchTypedSubjectAltNames: ['DNS', 'IP_ADDRESS'].map((sanType) => ({ sanType, matcher: { exact: xdsHost } })),
          trustedCa: { inlineBytes: Buffer.from(caPem ?? certificatePem).toString('base64') },
        },
      });
    }
    // Health checking rides on the ADS connection, with the same token (docs/xds.md, Health from the control plane).
    const hdsConfig =
      dataplane && this.options.healthChecks ? { apiType: 'GRPC', transportApiVersion: 'V3', setNodeOnFirstMessageOnly: true, grpcServices: [adsService] } : undefined;
    const bootstrap = {
      node: { id: nodeId, cluster: dataplane ? (services[0] ?? 'unknown') : proxyType, metadata },
      layeredRuntime: { layers: [{ name: 'mesh', staticLayer: { 're2.max_program_size.error_level': 4294967295, 're2.max_program_size.warn_level': 1000 } }] },
      dynamicResources: {
        ldsConfig: { ads: {}, resourceApiVersion: 'V3' },
        cdsConfig: { ads: {}, resourceApiVersion: 'V3' },
        adsConfig: {
          apiType: request.features?.includes(FEATURE_DELTA_GRPC) ? 'DELTA_GRPC' : 'GRPC',
          transportApiVersion: 'V3',
          setNodeOnFirstMessageOnly: true,
          grpcServices: [adsService],
        },
      },
      staticResources: { clusters: [adsCluster], ...(secrets.length > 0 ? { secrets } : {}) },
      ...(hdsConfig ? { hdsConfig } : {}),
      admin: {
        address: { socketAddress: { address: settings.adminAddress, portValue: adminPort } },
        ...(settings.adminAccessLogPath
          ? {
              accessLog: [
                {
                  name: 'envoy.access_loggers.file',
                  typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: settings.adminAccessLogPath },
                },
              ],
            }
          : {}),
      },
    };
    const transparentProxy = Boolean(networking.transparentProxying?.redirectPortInbound && networking.transparentProxying.redirectPortOutbound);
    return {
      // JSON is YAML: Envoy reads it from the file the runner writes.
      bootstrap: Buffer.from(JSON.stringify(bootstrap, null, 2)).toString('base64'),
      meshSidecarConfiguration: {
        networking: { isUsingTransparentProxy: transparentProxy },
        metrics: { aggregate: dataplane ? await this.aggregatedMetrics(mesh, resource) : [] },
      },
    };
  }

  /**
   * The applications whose metrics the runner merges into the proxy's: the enabled `aggregate`
   * entries of the proxy's prometheus settings, on the proxy's address unless an entry names its
   * own (docs/xds.md, Proxy metrics and monitoring assignments).
   */
  private async aggregatedMetrics(mesh: string, dataplane: DataplaneSpec): Promise<Array<{ name: string; address: string; port: number; path: string }>> {
    const stored = await this.options.store.get({ type: meshKind.name, mesh: '', name: mesh });
    const settings = stored && dataplanePrometheusSettings(JSON.parse(stored.spec) as MeshSpec, dataplane.metrics);
    return (settings?.aggregate ?? [])
      .filter((entry) => entry.enabled !== false)
      .map((entry) => ({ name: entry.name ?? '', address: entry.address || (dataplane.networking?.address ?? ''), port: entry.port ?? 0, path: entry.path ?? '' }));
  }

  /** The proxy resource passed in the request (validated), else the stored one. */
  private async proxyResource(request: BootstrapRequest, proxyType: ProxyType): Promise<{ resource: Record<string, unknown>; mesh: string; name: string }> {
    const kind = getKind(RESOURCE_TYPE_OF[proxyType]);
    if (request.dataplaneResource) {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(request.dataplaneResource) as Record<string, unknown>;
      } catch {
        throw new BootstrapError(422, 'dataplaneResource: expected the resource as JSON');
      }
      if (body.type !== kind.name) throw new BootstrapError(422, `invalid resource: expected a ${kind.name}, got ${JSON.stringify(body.type)}`);
      const decoded = decodeSpec(kind, body);
      if (!decoded.ok) throw new BootstrapError(422, decoded.message);
      const violations = kind.validate(decoded.spec);
      if (violations.length > 0) throw new BootstrapError(422, violations.map((violation) => `${violation.field}: ${violation.message}`).join('; '));
      const mesh = kind.scope === 'mesh' ? scalarText(body.mesh) : '';
      const name = scalarText(body.name);
      const networking = decoded.spec.networking as { transparentProxying?: unknown; outbound?: unknown[] } | undefined;
      if (networking?.transparentProxying && (networking.outbound ?? []).length > 0) {
        throw new BootstrapError(422, 'outbound: should be empty since dataplane is in Transparent Proxying mode');
      }
      if (kind.scope === 'mesh' && !(await this.options.store.get({ type: meshKind.name, mesh: '', name: mesh }))) {
        throw new BootstrapError(422, `mesh: mesh "${mesh}" does not exist`);
      }
      return { resource: decoded.spec, mesh, name };
    }
    const mesh = kind.scope === 'mesh' ? (request.mesh ?? '') : '';
    const name = request.name ?? '';
    const stored = await this.options.store.get({ type: kind.name, mesh, name });
    if (!stored) throw new BootstrapError(404, '');
    return { resource: JSON.parse(stored.spec) as Record<string, unknown>, mesh, name };
  }

  /** The CA the proxy verifies this server with: the runner's (`--ca-cert-file`), else the server's own certificate. */
  private caCertificate(request: BootstrapRequest): string | undefined {
    const pem = request.caCert || this.options.certificatePem;
    if (!pem) return undefined;
    let ca: boolean;
    try {
      ca = isCaCertificate(pem);
    } catch {
      // The runner's certificate is the caller's mistake; the server's own cannot be unparsable (it serves with it).
      throw new BootstrapError(request.caCert ? 400 : 500, `could not parse certificate from ${request.caCert ? 'request .CaCert' : 'the server certificate'}`);
    }
    if (!ca) throw new BootstrapError(400, NOT_CA);
    return pem;
  }
}

function serviceTagsOf(resource: Record<string, unknown>): string[] {
  const networking = (resource.networking ?? {}) as { inbound?: Array<{ tags?: Record<string, string> }>; gateway?: { tags?: Record<string, string> } };
  const services = [...(networking.inbound ?? []).map((inbound) => inbound.tags?.['mesh.io/service']), networking.gateway?.tags?.['mesh.io/service']];
  return services.filter((service): service is string => service !== undefined).sort();
}

/** The answer to a `POST /bootstrap` (the transport read it: src/transport-worker.ts). */
export async function answerBootstrap(generator: BootstrapGenerator, call: BootstrapCall, onError: (error: unknown) => void): Promise<HttpAnswer> {
  const text = (status: number, body: string): HttpAnswer => ({ status, contentType: PLAIN_TEXT, body });
  let json: unknown;
  try {
    json = JSON.parse(call.body);
  } catch {
    return text(400, 'could not parse the request: expected a JSON object');
  }
  const parsed = BootstrapRequestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return text(400, issue && issue.path.length > 0 ? `could not parse the request: ${issue.path.join('.')}: ${issue.message}` : 'could not parse the request: expected a JSON object');
  }
  try {
    const body = await generator.generate(parsed.data, hostOf(call.host));
    if (call.accept === 'application/json') return { status: 200, contentType: 'application/json', body: JSON.stringify(body) };
    // Older runners read the bootstrap itself.
    return { status: 200, contentType: 'text/x-yaml', body: Buffer.from(String(body.bootstrap), 'base64').toString('utf8') };
  } catch (error) {
    if (error instanceof BootstrapError) return text(error.status, error.message);
    onError(error);
    return text(500, '');
  }
}

/** The host of a Host header, without its port (IPv6 brackets removed). */
function hostOf(header: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(header);
  if (bracketed) return bracketed[1] ?? '';
  const colon = header.lastIndexOf(':');
  return colon >= 0 && header.indexOf(':') === colon ? header.slice(0, colon) : header;
}
