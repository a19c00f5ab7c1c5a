// The command line of both binaries: parse flags, load configuration, run until a signal.
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import { setFlagsFromString } from 'node:v8';
import { isMainThread, parentPort } from 'node:worker_threads';
import { PRODUCT, PRODUCT_VERSION } from '@mesh/model';
import { Command, Option } from 'commander';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { PrettyOptions } from 'pino-pretty';
import sonicBoom from 'sonic-boom';
import { Document, isPair, isScalar, isSeq, visit } from 'yaml';
import { DEFAULT_CONFIG } from './config-defaults.js';
import { checkZoneSettings, ConfigError, configKeys, loadConfig, type ControlPlaneConfig } from './config.js';
import { startControlPlane, type RunningControlPlane } from './control-plane.js';
import type { EngineSettings } from './launch.js';
import { outliveOutputReaders } from './output-readers.js';

export type Binary = 'mesh-zone' | 'mesh-global';

/** The mode a binary runs in: the global is always global; a zone with a global address joins it. */
function resolveMode(binary: Binary, config: ControlPlaneConfig): void {
  if (binary === 'mesh-global') {
    if (config.mode === 'zone') throw new ConfigError('mesh-global cannot run as a zone control plane; use mesh-zone', 'mode');
    config.mode = 'global';
  } else {
    if (config.mode === 'global') throw new ConfigError('mesh-zone cannot run as a global control plane; use mesh-global', 'mode');
    if (config.mode === 'standalone' && config.multizone.zone.globalAddress !== '') config.mode = 'zone';
    if (config.mode === 'zone') checkZoneSettings(config);
  }
}

/** The configuration's defaults as YAML, each key with the environment variable that sets it. */
export function defaultsYaml(): string {
  const envByPath = new Map(configKeys().map(({ path, env }) => [path.join('.'), env]));
  const document = new Document(DEFAULT_CONFIG);
  visit(document, {
    Pair(_, pair, path) {
      const keys = [...path.filter(isPair), pair].map((p) => String((p.key as { value?: unknown }).value ?? p.key));
      const env = envByPath.get(keys.join('.'));
      if (isSeq(pair.value) && pair.value.items.length === 0) pair.value.flow = true;
      if (env && (isScalar(pair.value) || isSeq(pair.value))) pair.value.comment = ` ${env}`;
    },
  });
  return document.toString();
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

const ENVIRONMENT_HELP = `
Configuration: defaults, then --config-file, then MESH_* environment variables, each a key path
in upper snake case (apiServer.http.port is MESH_API_SERVER_HTTP_PORT). The most used:
  MESH_MODE, MESH_API_SERVER_HTTP_PORT, MESH_API_SERVER_HTTPS_PORT, MESH_GENERAL_WORK_DIR,
  MESH_STORE_TYPE, MESH_STORE_SQLITE_PATH, MESH_STORE_POSTGRES_HOST, MESH_DIAGNOSTICS_SERVER_PORT,
  MESH_MULTIZONE_ZONE_NAME, MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS, MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN
Every key with its variable and default: "config print-defaults".`;

/** Where everything is, for the operator who just started it. */
function banner(binary: Binary, config: ControlPlaneConfig, running: RunningControlPlane): string {
  const { http, https, diagnostics } = running.ports;
  const store = config.store.type === 'postgres' ? `postgres://${config.store.postgres.host}:${config.store.postgres.port}/${config.store.postgres.dbName}` : config.store.type === 'memory' ? 'memory (nothing kept)' : config.store.sqlite.path;
  const lines = [
    `${binary} ${PRODUCT_VERSION} is running (${config.mode})`,
    ...(http !== undefined ? [`  API          http://127.0.0.1:${http}  (reference: http://127.0.0.1:${http}/docs)`] : []),
    ...(http !== undefined && config.apiServer.gui.enabled ? [`  GUI          http://127.0.0.1:${http}${config.apiServer.gui.basePath.replace(/\/+$/, '')}/`] : []),
    ...(https !== undefined ? [`  API (TLS)    https://127.0.0.1:${https}`] : []),
    ...(diagnostics !== undefined ? [`  diagnostics  http://127.0.0.1:${diagnostics}/ready, /healthy, /metrics`] : []),
    ...(running.ports.kds !== undefined ? [`  zone sync    ${config.multizone.global.kds.tlsEnabled ? 'grpcs' : 'grpc'}://127.0.0.1:${running.ports.kds} (zones connect here)`] : []),
    ...(config.mode === 'zone' ? [`  global       ${config.multizone.zone.globalAddress} (zone ${config.multizone.zone.name})`] : []),
    `  data         ${store}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** JSON lines are written once this many characters are waiting (a few hundred requests' lines), or after LOG_FLUSH_MS. */
const LOG_BATCH_CHARS = 64 * 1024;
const LOG_FLUSH_MS = 100;

/**
 * JSON lines, as log collectors want them; on a terminal, readable lines through pino-pretty (a
 * development dependency) when it is installed, written synchronously, one line an entry (its
 * fields as JSON after the message). JSON lines are written in batches, at most LOG_FLUSH_MS after
 * they are logged: one write per line (each API request logs one) handed every line to a worker
 * thread and woke it, about a tenth of a sequential write request's cost, and batches of 4 KB
 * still cost a kept answer a tenth of its CPU (docs/architecture.md, Request path). What is waiting is
 * written when the process exits, so nothing is lost when it exits at once (a bad configuration, a
 * second signal).
 */
function createLogger(binary: Binary, level: string): Logger {
  const options = { name: binary, level, redact: ['*.password', '*.token', 'config.store.postgres.password'] };
  if (!isatty(1)) return pino(options, jsonLinesDestination());
  let pretty: ((options: PrettyOptions) => DestinationStream) | undefined;
  try {
    // Resolved at run time, so the bundle does not carry it and an install without it runs.
    pretty = createRequire(import.meta.url)('pino-pretty') as typeof pretty;
  } catch {
    return pino(options);
  }
  return pino(options, pretty!({ destination: 1, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true }));
}

/**
 * Batched JSON lines on standard output. The lines of a batch wait here and go to the stream joined:
 * the stream measures the bytes of what it holds at every write, which made each line cost as much
 * as the batch was long. When nothing reads the output any more (the reader exited: EPIPE), lines
 * are dropped and the control plane goes on serving; the write at exit gives up rather than
 * retrying, so a stop never hangs on output nobody reads.
 */
function jsonLinesDestination(): DestinationStream {
  const output = new sonicBoom.SonicBoom({ fd: 1, maxWrite: 2 * LOG_BATCH_CHARS });
  let readerGone = false;
  let waiting: string[] = [];
  let waitingChars = 0;
  const take = () => {
    const batch = waiting.join('');
    waiting = [];
    waitingChars = 0;
    return batch;
  };
  const flush = () => {
    if (waiting.length > 0 && !readerGone) output.write(take());
  };
  setInterval(flush, LOG_FLUSH_MS).unref();
  output.on('error', () => {
    readerGone = true;
  });
  process.on('exit', () => {
    if (readerGone) return;
    try {
      // What the stream holds, then the lines waiting here, each written at once: a write handed
      // to the stream now would start in the background and might not end before the process.
      output.flushSync();
      if (waiting.length > 0) writeSync(1, take());
    } catch {
      // Nobody reads what is left.
    }
  });
  return {
    write: (line: string) => {
      if (readerGone) return;
      waiting.push(line);
      waitingChars += line.length;
      if (waitingChars >= LOG_BATCH_CHARS) flush();
    },
  };
}

/**
 * Ends a start that failed. A setting to change is one plain line on a terminal (`Error:
 * [<context>: ]<key> (<variable>): <problem>`), with no stack; off a terminal, and for any other
 * failure, a fatal log entry (its message the context, else the error's), whose error names the
 * key and variable too (`err.setting`, `err.variable`).
 */
function failStart(logger: Logger, error: unknown, context?: string): never {
  const message = (error as Error).message;
  if (error instanceof ConfigError && isatty(2)) process.stderr.write(`Error: ${context ? `${context}: ` : ''}${message}\n`);
  else logger.fatal({ err: error }, context ?? message);
  process.exit(1);
}

/** What `version` and `--version` print, as the reference's `version` does. */
const VERSION_LINE = `${PRODUCT}: ${PRODUCT_VERSION}`;

/**
 * SIGTERM and SIGINT: on the main thread from the process; on the thread a launcher started
 * (launch.ts) from the launcher, which receives them.
 */
function onStopSignal(handler: (signal: NodeJS.Signals) => void): void {
  if (isMainThread) {
    process.on('SIGTERM', handler);
    process.on('SIGINT', handler);
  } else {
    parentPort!.on('message', (message: { signal: NodeJS.Signals }) => handler(message.signal));
  }
}

/** `engine` is what the launcher chose (launch.ts); the start logs it. */
export async function runBinary(binary: Binary, argv: string[] = process.argv, engine?: EngineSettings): Promise<void> {
  const program = new Command(binary)
    .description(binary === 'mesh-zone' ? 'Zone control plane of the service mesh (standalone by default)' : 'Global control plane of the service mesh')
    .version(VERSION_LINE)
    .addHelpText('after', ENVIRONMENT_HELP)
    .showHelpAfterError();
  let options: { configFile?: string; logLevel: string } | undefined;
  program
    .command('run', { isDefault: true })
    .description('run the control plane (the default command)')
    .option('-c, --config-file <file>', 'YAML configuration file (MESH_* environment variables override it)')
    .addOption(new Option('--log-level <level>', 'least severe log level shown').choices(LOG_LEVELS).env('MESH_LOG_LEVEL').default('info'))
    .addHelpText('after', ENVIRONMENT_HELP)
    .action((opts: { configFile?: string; logLevel: string }) => {
      options = opts;
    });
  program
    .command('config')
    .description('configuration')
    .command('print-defaults')
    .description('print the default configuration as YAML, with the environment variable of each key')
    .action(() => {
      process.stdout.write(defaultsYaml());
    });
  program
    .command('version')
    .description('print the version')
    .action(() => {
      process.stdout.write(`${VERSION_LINE}\n`);
    });
  await program.parseAsync(argv);
  if (!options) return;

  outliveOutputReaders();
  const logger = createLogger(binary, options.logLevel);
  let config: ControlPlaneConfig;
  try {
    config = loadConfig(options.configFile ? { configFile: options.configFile } : {});
    resolveMode(binary, config);
  } catch (error) {
    failStart(logger, error, 'invalid configuration');
  }

  // The engine reads this at every full collection, so setting it now takes effect (docs/architecture.md, Memory).
  if (config.runtime.heapGrowthPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.runtime.heapGrowthPercent}`);

  let running: RunningControlPlane;
  try {
    running = await startControlPlane(config, { logger });
  } catch (error) {
    failStart(logger, error);
  }

  if (engine) logger.info({ semiSpaceMb: engine.semiSpaceMb ?? 'default', chosenBy: engine.chosenBy, thread: isMainThread ? 'main' : 'worker' }, 'engine settings');
  process.stderr.write(banner(binary, config, running));

  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second signal: the operator does not want to wait for the drain.
      logger.warn({ signal }, 'forced exit');
      process.exit(130);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  onStopSignal(shutdown);
}
