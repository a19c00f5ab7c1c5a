// The control plane's configuration: defaults, then an optional YAML file, then MESH_*
// environment variables. Keys follow the reference's (`KUMA_X` is `MESH_X`); each env var is the
// key path in upper snake case (`apiServer.http.port` -> MESH_API_SERVER_HTTP_PORT).
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';

export const DEFAULT_CONFIG = {
  environment: 'universal',
  mode: 'standalone',
  general: {
    workDir: join(homedir(), '.mesh'),
    advertisedHostname: 'localhost',
    tlsCertFile: '',
    tlsKeyFile: '',
  },
  store: {
    type: 'sqlite',
    sqlite: { path: '' },
    unsafeDelete: false,
    kubernetes: { systemNamespace: 'mesh-system' },
    postgres: { host: '127.0.0.1', port: 15432, user: 'mesh', password: 'mesh', dbName: 'mesh', connectionTimeout: 5 },
  },
  apiServer: {
    readOnly: false,
    corsAllowedDomains: ['.*'],
    http: { enabled: true, interface: '0.0.0.0', port: 5681 },
    https: { enabled: true, interface: '0.0.0.0', port: 5682, tlsCertFile: '', tlsKeyFile: '', requireClientCert: false },
    authn: { type: 'tokens', localhostIsAdmin: true },
  },
  defaults: { skipMeshCreation: false, skipTenantResources: false },
  diagnostics: { serverPort: 5680, debugEndpoints: false },
  multizone: {
    global: { kds: { grpcPort: 5685 } },
    zone: { name: '', globalAddress: '' },
  },
  runtime: { shutdownTimeout: '10s' },
};

type Widen<T> = T extends string ? string : T extends number ? number : T extends boolean ? boolean : T extends readonly string[] ? string[] : { [K in keyof T]: Widen<T[K]> };
export type ControlPlaneConfig = Widen<typeof DEFAULT_CONFIG>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Tree = Record<string, unknown>;
const isTree = (value: unknown): value is Tree => value !== null && typeof value === 'object' && !Array.isArray(value);

const envName = (path: readonly string[]) =>
  `MESH_${path.map((key) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()).join('_')}`;

/** Every leaf key of the defaults with its env var name (`apiServer.http.port`, MESH_API_SERVER_HTTP_PORT). */
export function configKeys(tree: Tree = DEFAULT_CONFIG, prefix: string[] = []): Array<{ path: string[]; env: string }> {
  return Object.entries(tree).flatMap(([key, value]) =>
    isTree(value) ? configKeys(value, [...prefix, key]) : [{ path: [...prefix, key], env: envName([...prefix, key]) }],
  );
}

function coerce(text: string, like: unknown, where: string): unknown {
  if (typeof like === 'number') {
    if (!/^-?\d+$/.test(text.trim())) throw new ConfigError(`${where}: expected an integer, got "${text}"`);
    return Number(text);
  }
  if (typeof like === 'boolean') {
    const lower = text.trim().toLowerCase();
    if (lower !== 'true' && lower !== 'false') throw new ConfigError(`${where}: expected true or false, got "${text}"`);
    return lower === 'true';
  }
  if (Array.isArray(like)) return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  return text;
}

/** Lays `overlay` over `base`, refusing unknown keys and values of the wrong type. */
function merge(base: Tree, overlay: Tree, where: string): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const path = where ? `${where}.${key}` : key;
    if (!(key in base)) throw new ConfigError(`${path}: unknown configuration key`);
    const current = base[key];
    if (value === null || value === undefined) continue;
    if (isTree(current)) {
      if (!isTree(value)) throw new ConfigError(`${path}: expected a mapping`);
      out[key] = merge(current, value, path);
    } else if (Array.isArray(current)) {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new ConfigError(`${path}: expected a list of strings`);
      out[key] = value;
    } else if (typeof value !== typeof current) {
      if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') out[key] = coerce(String(value), current, path);
      else throw new ConfigError(`${path}: expected a ${typeof current}`);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function setPath(tree: Tree, path: readonly string[], value: unknown): void {
  let node = tree;
  for (const key of path.slice(0, -1)) node = node[key] as Tree;
  node[path.at(-1)!] = value;
}

function getPath(tree: Tree, path: readonly string[]): unknown {
  return path.reduce<unknown>((node, key) => (isTree(node) ? node[key] : undefined), tree);
}

export interface LoadConfigOptions {
  configFile?: string;
  env?: NodeJS.ProcessEnv;
}

/** Defaults, then the YAML file, then MESH_* variables; then derived values and sanity checks. */
export function loadConfig(options: LoadConfigOptions = {}): ControlPlaneConfig {
  let config: Tree = structuredClone(DEFAULT_CONFIG);
  if (options.configFile) {
    let parsed: unknown;
    try {
      parsed = parseYaml(readFileSync(options.configFile, 'utf8'));
    } catch (error) {
      throw new ConfigError(`cannot read configuration file ${options.configFile}: ${(error as Error).message}`);
    }
    if (parsed !== null && parsed !== undefined) {
      if (!isTree(parsed)) throw new ConfigError(`${options.configFile}: expected a YAML mapping at the top level`);
      config = merge(config, parsed, '');
    }
  }
  const env = options.env ?? process.env;
  for (const { path, env: name } of configKeys()) {
    const text = env[name];
    if (text !== undefined) setPath(config, path, coerce(text, getPath(DEFAULT_CONFIG, path), name));
  }
  return finish(config as ControlPlaneConfig);
}

const ENVIRONMENTS = ['universal', 'kubernetes'];
const MODES = ['standalone', 'global', 'zone'];
const STORE_TYPES = ['sqlite', 'memory'];

function finish(config: ControlPlaneConfig): ControlPlaneConfig {
  if (!ENVIRONMENTS.includes(config.environment)) throw new ConfigError(`environment: must be one of ${ENVIRONMENTS.join(', ')}, got "${config.environment}"`);
  if (!MODES.includes(config.mode)) throw new ConfigError(`mode: must be one of ${MODES.join(', ')}, got "${config.mode}"`);
  if (!STORE_TYPES.includes(config.store.type)) throw new ConfigError(`store.type: must be one of ${STORE_TYPES.join(', ')}, got "${config.store.type}"`);
  if (config.mode === 'zone' && config.multizone.zone.name === '') throw new ConfigError('multizone.zone.name: a zone control plane needs a zone name (MESH_MULTIZONE_ZONE_NAME)');
  for (const [key, port] of [
    ['apiServer.http.port', config.apiServer.http.port],
    ['apiServer.https.port', config.apiServer.https.port],
    ['diagnostics.serverPort', config.diagnostics.serverPort],
    ['multizone.global.kds.grpcPort', config.multizone.global.kds.grpcPort],
  ] as const) {
    if (port < 0 || port > 65535) throw new ConfigError(`${key}: port must be in the range [0, 65535], got ${port}`);
  }
  config.general.workDir = resolve(config.general.workDir);
  if (config.store.sqlite.path === '') config.store.sqlite.path = join(config.general.workDir, 'mesh.db');
  return config;
}

export const MASK = '*****';

/** The configuration as `/config` shows it: secret values replaced by the mask. */
export function effectiveConfig(config: ControlPlaneConfig): Record<string, unknown> {
  const shown = structuredClone(config) as ControlPlaneConfig;
  shown.store.postgres.password = MASK;
  return shown as unknown as Record<string, unknown>;
}
