import type { InsightAggregator } from '@mesh/insights';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Mode } from '@mesh/model';
import type { ProxyConfigService } from '@mesh/proxy-config';
import type { ResourceManager } from '@mesh/resource-manager';
import type { AccessOptions } from './access.js';

/** Facts about this process, shown by `/` and in subscriptions. */
export interface ControlPlaneInfo {
  hostname: string;
  product: string;
  version: string;
  /** A UUID per process. */
  instanceId: string;
  /** A UUID kept in the store across restarts. */
  clusterId: string;
}

export interface Logger {
  error(details: object, message: string): void;
}

/** Told of every answered request, by route template (`/meshes/{mesh}/dataplanes`), for metrics. */
export type RequestObserver = (request: { route: string; method: string; status: number; seconds: number }) => void;

/** Everything the REST surface depends on; no globals, so tests build as many servers as they like. */
export interface ApiContext {
  manager: ResourceManager;
  /** Mesh and service insights, kept up to date from store changes. */
  insights: InsightAggregator;
  /** Matched policies and rendered configuration of every proxy, kept up to date from store changes. */
  proxyConfigs: ProxyConfigService;
  mode: Mode;
  zoneName: string | undefined;
  access: AccessOptions;
  corsAllowedDomains: readonly string[];
  logger: Logger;
  info: ControlPlaneInfo;
  /** The effective configuration as `/config` shows it, secret values already masked. */
  effectiveConfig: Record<string, unknown>;
  observeRequest?: RequestObserver;
  /** Runs first for every request (the request log). */
  requestLogger?: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
}
