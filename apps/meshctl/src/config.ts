// The client's configuration file: the control planes it knows and the one in use, as the
// reference's CLI keeps them (`~/.meshctl/config`, `--config-file`, `MESHCTL_CONFIG`).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';

export interface ControlPlaneEntry {
  name: string;
  coordinates: {
    apiServer: {
      url: string;
      authType?: string;
      authConf?: Record<string, string>;
      caCertFile?: string;
      skipVerify?: boolean;
    };
  };
}

export interface ClientConfig {
  contexts: Array<{ name: string; controlPlane: string }>;
  controlPlanes: ControlPlaneEntry[];
  currentContext: string;
}

const LOCAL: ClientConfig = {
  contexts: [{ name: 'local', controlPlane: 'local' }],
  controlPlanes: [{ name: 'local', coordinates: { apiServer: { url: 'http://127.0.0.1:5681' } } }],
  currentContext: 'local',
};

export const configPath = (flag: string | undefined): string => flag ?? process.env.MESHCTL_CONFIG ?? join(homedir(), '.meshctl', 'config');

export function readClientConfig(path: string): ClientConfig {
  if (!existsSync(path)) return structuredClone(LOCAL);
  const parsed = parse(readFileSync(path, 'utf8')) as Partial<ClientConfig> | null;
  return { contexts: parsed?.contexts ?? [], controlPlanes: parsed?.controlPlanes ?? [], currentContext: parsed?.currentContext ?? '' };
}

export function writeClientConfig(path: string, config: ClientConfig): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, stringify(config), { mode: 0o600 });
}

/** The control plane of the current context. */
export function currentControlPlane(config: ClientConfig): ControlPlaneEntry {
  const context = config.contexts.find((c) => c.name === config.currentContext);
  const controlPlane = context && config.controlPlanes.find((cp) => cp.name === context.controlPlane);
  if (!controlPlane) throw new UserError(`there is no current control plane: add one with "meshctl config control-planes add"`);
  return controlPlane;
}

/** An error the user can act on: printed as one line, exit status 1. */
export class UserError extends Error {}
