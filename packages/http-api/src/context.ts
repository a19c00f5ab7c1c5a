import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InsightAggregator } from '@mesh/insights';
import type { Mode } from '@mesh/model';
import type { ProxyConfigService } from '@mesh/proxy-config';
import type { ResourceManager } from '@mesh/resource-manager';
import type { AccessOptions } from './access.js';
import type { ChangeStreamOptions } from './events/hub.js';
import type { GuiOptions } from './gui.js';
import type { ApiLimits } from './limits.js';
import type { ZoneAdmin } from './zone-forwarding.js';

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

/** Told of every request whose answer was sent, by route template (`/meshes/{mesh}/dataplanes`), for metrics. */
export type RequestObserver = (request: { route: string; method: string; status: number; seconds: number }) => void;

/** A proxy by its resource: a Dataplane of a mesh, a ZoneIngress or a ZoneEgress (mesh ''). */
export interface ProxyRef {
  type: string;
  mesh: string;
  name: string;
}

/**
 * Live views of connected proxies (docs/xds.md, Inspection), given by the data plane server of a
 * zone or standalone control plane. Failures are DomainErrors (`unavailable` when the proxy's
 * admin API cannot be reached).
 */
export interface ProxyInspector {
  /** The `/xds` document as last sent on the proxy's live stream; undefined when it has none on this instance. */
  configDump(proxy: ProxyRef): Promise<unknown>;
  /** Envoy's admin output of a proxy (`stats`, `clusters`), with the query string passed on. */
  admin(proxy: ProxyRef, operation: 'stats' | 'clusters', query: string): Promise<{ body: string; contentType: string }>;
}

/** Everything the REST surface depends on; no globals, so tests build as many servers as they like. */
export interface ApiContext {
  manager: ResourceManager;
  /** Mesh and service insights, kept up to date from store changes. */
  insights: InsightAggregator;
  /** Matched policies and rendered configuration of every proxy, kept up to date from store changes. */
  proxyConfigs: ProxyConfigService;
  /** Live views of connected proxies; absent where no data plane server runs (a global, tests). */
  proxyInspector?: ProxyInspector;
  mode: Mode;
  zoneName: string | undefined;
  access: AccessOptions;
  corsAllowedDomains: readonly string[];
  logger: Logger;
  info: ControlPlaneInfo;
  /** The effective configuration as `/config` shows it, secret values already masked. */
  effectiveConfig: Record<string, unknown>;
  observeRequest?: RequestObserver;
  /** On a global: the zones connected to it, which answer inspection of their proxies. */
  zoneAdmin?: ZoneAdmin;
  /** Body size and requests in flight (docs/api.md, Limits); the defaults where left out. */
  limits?: Partial<ApiLimits>;
  /** What the change stream keeps and allows (docs/api.md, Change stream); the defaults where left out. */
  changeStream?: Partial<ChangeStreamOptions>;
  /** The web GUI served beside the API (docs/gui.md); absent where none is (tests). */
  gui?: GuiOptions;
  /**
   * Called first for every request (the request log); it may set headers, and what it returns is
   * called once the answer is done (sent, or its connection gone first).
   */
  requestLogger?: (req: IncomingMessage, res: ServerResponse) => (() => void) | void;
}
