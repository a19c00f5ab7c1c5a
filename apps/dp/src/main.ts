// mesh-dp: starts a data plane proxy (Envoy) configured by the control plane. See README.md.
import { PRODUCT, PRODUCT_VERSION } from '@mesh/model';
import { Command, InvalidArgumentError, Option } from 'commander';
import { BootstrapRefused } from './bootstrap-client.js';
import { run, type RunOptions } from './run.js';

/** Go-style durations (`30s`, `1m30s`, `500ms`) in seconds. */
function seconds(text: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)];
  if (text !== '0' && (parts.length === 0 || parts.map((part) => part[0]).join('') !== text)) {
    throw new InvalidArgumentError(`expected a duration such as 30s or 1m30s, got "${text}"`);
  }
  return parts.reduce((total, part) => total + Number(part[1]) * (units[part[2] ?? 's'] ?? 0), 0);
}

function port(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 65535) throw new InvalidArgumentError(`expected a port (1-65535), got "${text}"`);
  return value;
}

function count(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new InvalidArgumentError(`expected a non-negative integer, got "${text}"`);
  return value;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** A Go-style boolean flag value: `--dns-enabled`, `--dns-enabled=false`. */
function bool(text: string): boolean {
  if (/^(1|t|true)$/i.test(text)) return true;
  if (/^(0|f|false)$/i.test(text)) return false;
  throw new InvalidArgumentError(`expected true or false, got "${text}"`);
}

/** What `version` and `--version` print, as the reference's runner's `version` does. */
const VERSION_LINE = `${PRODUCT}: ${PRODUCT_VERSION}`;

const program = new Command('mesh-dp').description('Data plane proxy runner: starts Envoy configured by the control plane').version(VERSION_LINE);

program
  .command('version')
  .description('Print version')
  .action(() => {
    process.stdout.write(`${VERSION_LINE}\n`);
  });

program
  .command('run')
  .description('Launch Dataplane (Envoy)')
  .addOption(new Option('--cp-address <url>', 'URL of the Control Plane Dataplane Server. Example: https://localhost:5678').env('MESH_CONTROL_PLANE_URL').default('https://localhost:5678'))
  .addOption(new Option('--ca-cert-file <file>', 'Path to CA cert by which connection to the Control Plane will be verified if HTTPS is used').env('MESH_CONTROL_PLANE_CA_CERT_FILE'))
  .addOption(new Option('--name <name>', 'Name of the Dataplane').env('MESH_DATAPLANE_NAME'))
  .addOption(new Option('--mesh <mesh>', 'Mesh that Dataplane belongs to').env('MESH_DATAPLANE_MESH'))
  .addOption(new Option('--proxy-type <type>', 'type of the Dataplane ("dataplane", "ingress", "egress")').env('MESH_DATAPLANE_PROXY_TYPE').default('dataplane'))
  .addOption(new Option('--dataplane <yaml>', 'Dataplane template to apply (YAML or JSON)').env('MESH_DATAPLANE_RUNTIME_RESOURCE'))
  .addOption(new Option('-d, --dataplane-file <file>', 'Path to Dataplane template to apply (YAML or JSON)').env('MESH_DATAPLANE_RUNTIME_RESOURCE_PATH'))
  .addOption(new Option('-v, --dataplane-var <key=value>', 'Variables to replace Dataplane template').argParser(collect).default([]))
  .addOption(new Option('--dataplane-token-file <file>', "Path to a file with dataplane token (use 'meshctl generate dataplane-token' to get one)").env('MESH_DATAPLANE_RUNTIME_TOKEN_PATH'))
  .addOption(new Option('--dataplane-token <token>', 'Dataplane Token').env('MESH_DATAPLANE_RUNTIME_TOKEN'))
  .addOption(new Option('--admin-port <port>', "Envoy's admin port (else the Dataplane's networking.admin.port, else the control plane's default)").argParser(port))
  .addOption(new Option('--binary-path <path>', 'Binary path of Envoy executable').env('MESH_DATAPLANE_RUNTIME_BINARY_PATH').default('', 'envoy on PATH'))
  .addOption(new Option('--config-dir <dir>', 'Directory in which Envoy config will be generated (default: a temporary directory)').env('MESH_DATAPLANE_RUNTIME_CONFIG_DIR'))
  .addOption(new Option('--socket-dir <dir>', 'Directory of the metrics socket and the access log pipe shared with Envoy (default: the config directory)').env('MESH_DATAPLANE_RUNTIME_SOCKET_DIR'))
  .addOption(new Option('--metrics-cert-path <file>', 'A path to the certificate for metrics listener').env('MESH_DATAPLANE_RUNTIME_METRICS_CERT_PATH'))
  .addOption(new Option('--metrics-key-path <file>', 'A path to the certificate key for metrics listener').env('MESH_DATAPLANE_RUNTIME_METRICS_KEY_PATH'))
  .addOption(new Option('--drain-time <duration>', 'drain time for Envoy connections on mesh-dp shutdown').env('MESH_DATAPLANE_DRAIN_TIME').argParser(seconds).default(30, '30s'))
  .addOption(new Option('--concurrency <n>', 'Number of Envoy worker threads').env('MESH_DATAPLANE_RUNTIME_CONCURRENCY').argParser(count).default(0))
  .addOption(new Option('--envoy-log-level <level>', 'Envoy log level: trace, debug, info, warning, error, critical, off').env('MESH_DATAPLANE_RUNTIME_ENVOY_LOG_LEVEL').default('info'))
  .addOption(new Option('--envoy-component-log-level <levels>', "Configures Envoy's --component-log-level").env('MESH_DATAPLANE_RUNTIME_ENVOY_COMPONENT_LOG_LEVEL').default(''))
  .addOption(
    new Option('--xds-transport-protocol-variant <variant>', 'how Envoy receives its configuration: GRPC (state of the world) or DELTA_GRPC (incremental)')
      .env('MESH_DATAPLANE_RUNTIME_ENVOY_XDS_TRANSPORT_PROTOCOL_VARIANT')
      .choices(['GRPC', 'DELTA_GRPC'])
      .default('GRPC'),
  )
  .addOption(new Option('--cp-retry-backoff <duration>', 'wait between attempts to fetch the bootstrap').env('MESH_CONTROL_PLANE_RETRY_BACKOFF').argParser(seconds).default(3, '3s'))
  .addOption(new Option('--cp-retry-max-duration <duration>', 'how long to keep trying to fetch the bootstrap').env('MESH_CONTROL_PLANE_RETRY_MAX_DURATION').argParser(seconds).default(300, '5m'))
  .addOption(
    new Option('--dns-enabled [enabled]', "If true then a transparent proxy's Envoy answers DNS for its application: service names get their virtual IPs, other names go to the system's resolvers")
      .env('MESH_DNS_ENABLED')
      .argParser(bool)
      .default(true),
  )
  .addOption(
    new Option('--dns-coredns-port <port>', 'A port on 127.0.0.1 that handles DNS requests (the DNS listener Envoy gets); `meshctl install transparent-proxy --redirect-dns` sends DNS traffic there')
      .env('MESH_DNS_CORE_DNS_PORT')
      .argParser(port)
      .default(15053),
  )
  .addOption(new Option('--dns-server-port <port>', 'Another name of --dns-coredns-port').env('MESH_DNS_SERVER_PORT').argParser(port))
  .action(async (raw: Omit<RunOptions, 'retryBackoffMs' | 'retryMaxDurationMs' | 'dnsPort'> & { cpRetryBackoff: number; cpRetryMaxDuration: number; dnsCorednsPort: number; dnsServerPort?: number }) => {
    const { cpRetryBackoff, cpRetryMaxDuration, dnsCorednsPort, dnsServerPort, ...rest } = raw;
    try {
      process.exitCode = await run({ ...rest, dnsPort: dnsServerPort ?? dnsCorednsPort, retryBackoffMs: cpRetryBackoff * 1000, retryMaxDurationMs: cpRetryMaxDuration * 1000 });
    } catch (error) {
      const message = error instanceof BootstrapRefused ? `Failed to generate Envoy bootstrap config. ${error.message}` : (error as Error).message;
      process.stderr.write(`Error: ${message}\n`);
      process.exitCode = 1;
    }
  });

await program.parseAsync(process.argv);
