// The control plane's configuration: defaults, then an optional YAML file, then MESH_*
// environment variables. Keys follow the reference's (`KUMA_X` is `MESH_X`); each env var is the
// key path in upper snake case (`apiServer.http.port` -> MESH_API_SERVER_HTTP_PORT).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { syncUrl } from '@mesh/kds';
import { isDnsLabel, NAME_MESSAGES, parseDurationNanos } from '@mesh/model';
import { parseIpv4Cidr } from '@mesh/proxy-config';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_CONFIG } from './config-defaults.js';

export { DEFAULT_CONFIG };

type Widen<T> = T extends string ? string : T extends number ? number : T extends boolean ? boolean : T extends readonly string[] ? string[] : { [K in keyof T]: Widen<T[K]> };
export type ControlPlaneConfig = Widen<typeof DEFAULT_CONFIG>;

/** Any part of the configuration: each key left out keeps its default. */
export type ControlPlaneSettings = { [K in keyof ControlPlaneConfig]?: Settings<ControlPlaneConfig[K]> };
type Settings<T> = T extends string | number | boolean | string[] ? T : { [K in keyof T]?: Settings<T[K]> };

const envName = (path: readonly string[]) =>
  `MESH_${path.map((key) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()).join('_')}`;

/**
 * A setting the operator has to change. With the key it is about, the message names the key and
 * its variable (`dpServer.port (MESH_DP_SERVER_PORT): ...`), whichever of them was used, and the
 * error carries both as `setting` and `variable` (fields of the JSON log line).
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly setting?: string;
  readonly variable?: string;

  constructor(problem: string, setting?: string, options?: ErrorOptions) {
    const variable = setting === undefined ? undefined : envName(setting.split('.'));
    super(setting === undefined ? problem : `${setting} (${variable}): ${problem}`, options);
    if (setting !== undefined) {
      this.setting = setting;
      this.variable = variable;
    }
  }
}

type Tree = Record<string, unknown>;
const isTree = (value: unknown): value is Tree => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Every leaf key of the defaults with its env var name (`apiServer.http.port`, MESH_API_SERVER_HTTP_PORT). */
export function configKeys(tree: Tree = DEFAULT_CONFIG, prefix: string[] = []): Array<{ path: string[]; env: string }> {
  return Object.entries(tree).flatMap(([key, value]) =>
    isTree(value) ? configKeys(value, [...prefix, key]) : [{ path: [...prefix, key], env: envName([...prefix, key]) }],
  );
}

/** A string default written as a Go duration (`1s`, `5m0s`) makes its key a duration. */
const isDurationKey = (like: unknown) => typeof like === 'string' && like !== '' && parseDurationNanos(like) !== undefined;

/** A text value (an env var, or a YAML scalar) as the type of the default of `setting`. */
function coerce(text: string, like: unknown, setting: string): unknown {
  if (typeof like === 'number') {
    if (!/^-?\d+$/.test(text.trim())) throw new ConfigError(`expected an integer, got "${text}"`, setting);
    return Number(text);
  }
  if (typeof like === 'boolean') {
    const lower = text.trim().toLowerCase();
    if (lower !== 'true' && lower !== 'false') throw new ConfigError(`expected true or false, got "${text}"`, setting);
    return lower === 'true';
  }
  if (Array.isArray(like)) return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (isDurationKey(like)) {
    const nanos = parseDurationNanos(text.trim());
    if (nanos === undefined) throw new ConfigError(`expected a duration such as 10s, 500ms or 1m30s, got "${text}"`, setting);
    return formatGoDuration(nanos);
  }
  return text;
}

/** Lays `overlay` over `base`, refusing unknown keys and values of the wrong type. */
function merge(base: Tree, overlay: Tree, where: string): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const path = where ? `${where}.${key}` : key;
    if (!(key in base)) throw new ConfigError(`${path}: ${legacyKeyNote(path) ?? `unknown configuration key${didYouMean(path, KEY_PATHS)}`}`);
    const current = base[key];
    if (value === null || value === undefined) continue;
    if (isTree(current)) {
      if (!isTree(value)) throw new ConfigError(`${path}: expected a mapping`);
      out[key] = merge(current, value, path);
    } else if (Array.isArray(current)) {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new ConfigError('expected a list of strings', path);
      out[key] = value;
    } else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') {
      out[key] = coerce(String(value), current, path);
    } else {
      throw new ConfigError(`expected a ${typeof current}`, path);
    }
  }
  return out;
}

/** Writes a value, creating the mappings on the way. */
function setPath(tree: Tree, path: readonly string[], value: unknown): void {
  let node = tree;
  for (const key of path.slice(0, -1)) {
    if (!isTree(node[key])) node[key] = {};
    node = node[key] as Tree;
  }
  node[path.at(-1)!] = value;
}

function getPath(tree: Tree, path: readonly string[]): unknown {
  return path.reduce<unknown>((node, key) => (isTree(node) ? node[key] : undefined), tree);
}

/** Variables of the process that are no configuration key: the log level (`--log-level`). */
export const PROCESS_VARIABLES: readonly string[] = ['MESH_LOG_LEVEL'];

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
  const known = new Set<string>(PROCESS_VARIABLES);
  for (const { path, env: name } of configKeys()) {
    known.add(name);
    const text = env[name];
    if (text !== undefined) setPath(config, path, coerce(text, getPath(DEFAULT_CONFIG, path), path.join('.')));
  }
  // A misspelt variable would otherwise be ignored in silence, as an unknown YAML key is not.
  const unknown = Object.keys(env).filter((name) => name.startsWith('MESH_') && !known.has(name)).sort();
  if (unknown.length === 1) {
    const hint = didYouMean(unknown[0]!, [...known]) || ' (each MESH_* variable is a key path in upper snake case, such as MESH_API_SERVER_HTTP_PORT)';
    throw new ConfigError(`${unknown[0]}: names no configuration key${hint}`);
  }
  if (unknown.length > 1) throw new ConfigError(`${unknown.join(', ')}: name no configuration key (each MESH_* variable is a key path in upper snake case, such as MESH_API_SERVER_HTTP_PORT)`);
  return finish(config as ControlPlaneConfig);
}

/**
 * The configuration of a program that embeds a control plane: `settings` laid over the defaults,
 * checked as the binaries check a configuration file (the same `ConfigError`s), no file or
 * environment variable read.
 */
export function resolveConfig(settings: ControlPlaneSettings = {}): ControlPlaneConfig {
  if (!isTree(settings)) throw new ConfigError('expected a mapping of settings');
  return finish(merge(structuredClone(DEFAULT_CONFIG), settings, '') as ControlPlaneConfig);
}

const KEY_PATHS = configKeys().map(({ path }) => path.join('.'));

/** `; did you mean X?` for the known name closest to a misspelt one (a few letters off), else ''. */
function didYouMean(name: string, known: readonly string[]): string {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= 3 && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  if (!best) return '';
  const closest = best.name;
  const key = configKeys().find(({ path, env }) => path.join('.') === closest || env === closest);
  return `; did you mean ${key ? `${key.path.join('.')} (${key.env})` : closest}?`;
}

/** Levenshtein distance: the insertions, deletions and substitutions that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

const ENVIRONMENTS = ['universal', 'kubernetes'];
const MODES = ['standalone', 'global', 'zone'];
const STORE_TYPES = ['sqlite', 'memory', 'postgres'];

/** Numeric keys named `port` or `...Port` hold TCP ports. */
const PORT_KEYS = configKeys().filter(({ path }) => typeof getPath(DEFAULT_CONFIG, path) === 'number' && /^port$|Port$/.test(path.at(-1)!));

function finish(config: ControlPlaneConfig): ControlPlaneConfig {
  if (!ENVIRONMENTS.includes(config.environment)) throw new ConfigError(`must be one of ${ENVIRONMENTS.join(', ')}, got "${config.environment}"`, 'environment');
  if (!MODES.includes(config.mode)) throw new ConfigError(`must be one of ${MODES.join(', ')}, got "${config.mode}"`, 'mode');
  if (!STORE_TYPES.includes(config.store.type)) throw new ConfigError(`must be one of ${STORE_TYPES.join(', ')}, got "${config.store.type}"`, 'store.type');
  if (config.mode === 'zone') checkZoneSettings(config);
  const kds = config.multizone.global.kds;
  if (kds.tlsCertFile === '' && kds.tlsKeyFile !== '') throw new ConfigError('cannot be empty if tlsKeyFile has been set', 'multizone.global.kds.tlsCertFile');
  if (kds.tlsKeyFile === '' && kds.tlsCertFile !== '') throw new ConfigError('cannot be empty if tlsCertFile has been set', 'multizone.global.kds.tlsKeyFile');
  if (kds.authn.type !== 'none' && kds.authn.type !== 'zoneToken') throw new ConfigError(`expected "zoneToken" or "none", got "${kds.authn.type}"`, 'multizone.global.kds.authn.type');
  for (const { path } of PORT_KEYS) {
    const port = getPath(config, path) as number;
    if (port < 0 || port > 65535) throw new ConfigError(`port must be in the range [0, 65535], got ${port}`, path.join('.'));
  }
  checkLimits(config);
  checkDnsServer(config);
  config.general.workDir = resolve(config.general.workDir);
  if (config.store.sqlite.path === '') config.store.sqlite.path = join(config.general.workDir, 'mesh.db');
  return config;
}

/** The limits of the API server and of the store must make sense (docs/api.md, Limits). */
function checkLimits(config: ControlPlaneConfig): void {
  const { readHeaderTimeout, readTimeout, maxRequestBodySize, maxConcurrentRequests } = config.apiServer;
  const headers = parseDurationNanos(readHeaderTimeout)!;
  const whole = parseDurationNanos(readTimeout)!;
  if (headers < 0) throw new ConfigError(`cannot be negative, got ${readHeaderTimeout}`, 'apiServer.readHeaderTimeout');
  if (whole < 0) throw new ConfigError(`cannot be negative, got ${readTimeout}`, 'apiServer.readTimeout');
  if (whole > 0 && headers > whole) throw new ConfigError(`must be at most apiServer.readTimeout (${readTimeout}), got ${readHeaderTimeout}`, 'apiServer.readHeaderTimeout');
  if (maxRequestBodySize <= 0) throw new ConfigError(`must be a positive number of bytes, got ${maxRequestBodySize}`, 'apiServer.maxRequestBodySize');
  if (maxConcurrentRequests < 0) throw new ConfigError(`cannot be negative (0 means no limit), got ${maxConcurrentRequests}`, 'apiServer.maxConcurrentRequests');
  if (config.store.sqlite.maxSize < 0) throw new ConfigError(`cannot be negative (0 means no cap), got ${config.store.sqlite.maxSize}`, 'store.sqlite.maxSize');
  const { heapGrowthPercent } = config.runtime;
  if (!Number.isInteger(heapGrowthPercent) || heapGrowthPercent < 0 || heapGrowthPercent > 1000) throw new ConfigError(`must be a whole number in the range [0, 1000] (0 leaves it to the engine), got ${heapGrowthPercent}`, 'runtime.heapGrowthPercent');
}

/** Virtual IPs come from an IPv4 range, and services answer on a port of theirs. */
function checkDnsServer(config: ControlPlaneConfig): void {
  const { CIDR, serviceVipPort, domain } = config.dnsServer;
  if (!parseIpv4Cidr(CIDR)) throw new ConfigError(`must be an IPv4 CIDR such as 240.0.0.0/4, got "${CIDR}"`, 'dnsServer.CIDR');
  if (serviceVipPort === 0) throw new ConfigError("port can't be 0", 'dnsServer.serviceVipPort');
  if (domain === '') throw new ConfigError('cannot be empty', 'dnsServer.domain');
}

/** A zone control plane needs a name that is one DNS label (synced names are `<zone>.<name>`) and its global's address. */
export function checkZoneSettings(config: ControlPlaneConfig): void {
  const { name, globalAddress } = config.multizone.zone;
  if (name === '') throw new ConfigError('a zone control plane needs a zone name', 'multizone.zone.name');
  if (!isDnsLabel(name)) throw new ConfigError(`"${name}" is not a valid zone name: ${NAME_MESSAGES.dnsLabel}`, 'multizone.zone.name');
  if (globalAddress === '') throw new ConfigError("a zone control plane needs its global's sync address, such as grpcs://global:5685", 'multizone.zone.globalAddress');
  try {
    syncUrl(globalAddress);
  } catch (error) {
    throw new ConfigError((error as Error).message, 'multizone.zone.globalAddress');
  }
}

/** Go's `time.Duration.String()`: `0s`, `250ms`, `1.5s`, `1m30s`, `72h0m0s`. */
export function formatGoDuration(nanos: number): string {
  if (nanos === 0) return '0s';
  const sign = nanos < 0 ? '-' : '';
  const abs = Math.abs(nanos);
  // Below a second Go picks the largest unit under the value; above it, h/m/s with a fraction of s.
  if (abs < 1e9) {
    const [unit, size] = abs < 1e3 ? ['ns', 1] : abs < 1e6 ? ['µs', 1e3] : ['ms', 1e6];
    return `${sign}${decimal(abs, size)}${unit}`;
  }
  const hours = Math.floor(abs / 3600e9);
  const minutes = Math.floor((abs % 3600e9) / 60e9);
  const seconds = `${decimal(abs % 60e9, 1e9)}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}`;
  return `${sign}${seconds}`;
}

/** `value / unit` in decimal without trailing zeros, exact for integer nanoseconds. */
function decimal(value: number, unit: number): string {
  const whole = Math.floor(value / unit);
  const digits = String(unit).length - 1;
  const fraction = String(value % unit).padStart(digits, '0').replace(/0+$/, '');
  return fraction === '' ? String(whole) : `${whole}.${fraction}`;
}

export const MASK = '*****';

/** Keys whose values `/config` never shows. */
const SECRET_KEYS: readonly string[] = ['store.postgres.password'];

/**
 * Keys of the API's older configuration layout that `/config` still shows, each with the key whose value
 * it mirrors: the servers they named were folded into the API, dataplane and diagnostics servers.
 * They are views, not settings, so every value has one source.
 */
const LEGACY_KEYS: ReadonlyArray<readonly [shown: string, source: string]> = [
  ['apiServer.port', 'apiServer.http.port'],
  ['bootstrapServer.port', 'dpServer.port'],
  ['xdsServer.grpcPort', 'dpServer.port'],
  ['xdsServer.diagnosticsPort', 'diagnostics.serverPort'],
  ['sdsServer.grpcPort', 'dpServer.port'],
  ['sdsServer.tlsCertFile', 'dpServer.tlsCertFile'],
  ['sdsServer.tlsKeyFile', 'dpServer.tlsKeyFile'],
  ['guiServer.port', 'apiServer.http.port'],
  ['guiServer.apiServerUrl', 'apiServer.rootUrl'],
  ['discovery.universal.pollingInterval', 'xdsServer.dataplaneConfigurationRefreshInterval'],
  ['adminServer.apis.dataplaneToken.enabled', 'dpServer.authn.dpProxy.dpToken.enableIssuer'],
  ['dataplaneTokenServer.enabled', 'dpServer.authn.dpProxy.dpToken.enableIssuer'],
  // The admin and token servers had a localhost port and a public, TLS-capable one.
  ...['adminServer', 'dataplaneTokenServer'].flatMap((server) => [
    [`${server}.local.port`, 'apiServer.http.port'] as const,
    [`${server}.public.enabled`, 'apiServer.https.enabled'] as const,
    [`${server}.public.interface`, 'apiServer.https.interface'] as const,
    [`${server}.public.port`, 'apiServer.https.port'] as const,
    [`${server}.public.tlsCertFile`, 'apiServer.https.tlsCertFile'] as const,
    [`${server}.public.tlsKeyFile`, 'apiServer.https.tlsKeyFile'] as const,
    [`${server}.public.clientCertsDir`, 'apiServer.auth.clientCertsDir'] as const,
  ]),
];

/** `defaults.mesh` of the older layout: the definition mesh `default` is created with (an empty spec). */
export const DEFAULT_MESH_DEFINITION = 'type: Mesh\nname: default\n';

/** Why an unknown YAML key is refused when it is one of the older keys `/config` shows. */
function legacyKeyNote(path: string): string | undefined {
  const source = LEGACY_KEYS.find(([shown]) => shown === path)?.[1];
  if (source) return `shown by /config for older clients and not a setting; set ${source} instead`;
  const shownBelow = [...LEGACY_KEYS.map(([shown]) => shown), 'defaults.mesh'].some((shown) => shown === path || shown.startsWith(`${path}.`));
  return shownBelow ? 'shown by /config for older clients and not a setting' : undefined;
}

/** The configuration as `/config` shows it: the 2.5.0 layout, the older keys, secret values masked. */
export function effectiveConfig(config: ControlPlaneConfig): Record<string, unknown> {
  const shown = structuredClone(config) as unknown as Tree;
  for (const [legacy, source] of LEGACY_KEYS) setPath(shown, legacy.split('.'), getPath(shown, source.split('.')));
  setPath(shown, ['defaults', 'mesh'], DEFAULT_MESH_DEFINITION);
  for (const key of SECRET_KEYS) setPath(shown, key.split('.'), MASK);
  return shown;
}
