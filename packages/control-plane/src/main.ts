// The command line of both binaries: parse flags, load configuration, run until a signal.
import { Command } from 'commander';
import { pino } from 'pino';
import { ConfigError, loadConfig, type ControlPlaneConfig } from './config.js';
import { startControlPlane } from './control-plane.js';

export type Binary = 'mesh-zone' | 'mesh-global';

/** The mode a binary runs in: the global is always global; a zone with a global address joins it. */
function resolveMode(binary: Binary, config: ControlPlaneConfig): void {
  if (binary === 'mesh-global') {
    if (config.mode === 'zone') throw new ConfigError('mode: mesh-global cannot run as a zone control plane; use mesh-zone');
    config.mode = 'global';
  } else {
    if (config.mode === 'global') throw new ConfigError('mode: mesh-zone cannot run as a global control plane; use mesh-global');
    if (config.mode === 'standalone' && config.multizone.zone.globalAddress !== '') config.mode = 'zone';
    if (config.mode === 'zone' && config.multizone.zone.name === '') {
      throw new ConfigError('multizone.zone.name: a zone control plane needs a zone name (MESH_MULTIZONE_ZONE_NAME)');
    }
  }
}

export async function runBinary(binary: Binary, argv: string[] = process.argv): Promise<void> {
  const program = new Command(binary)
    .description(binary === 'mesh-zone' ? 'Zone control plane of the service mesh (standalone by default)' : 'Global control plane of the service mesh')
    .option('-c, --config-file <file>', 'YAML configuration file (MESH_* environment variables override it)')
    .parse(argv);
  const options = program.opts<{ configFile?: string }>();

  const logger = pino({ name: binary, redact: ['*.password', '*.token', 'config.store.postgres.password'] });
  let config: ControlPlaneConfig;
  try {
    config = loadConfig(options.configFile ? { configFile: options.configFile } : {});
    resolveMode(binary, config);
  } catch (error) {
    logger.fatal({ err: error }, 'invalid configuration');
    process.exit(1);
  }

  let running: Awaited<ReturnType<typeof startControlPlane>>;
  try {
    running = await startControlPlane(config, logger);
  } catch (error) {
    logger.fatal({ err: error }, (error as Error).message);
    process.exit(1);
  }

  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
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
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
