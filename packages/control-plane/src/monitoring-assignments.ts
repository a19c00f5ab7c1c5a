// The monitoring assignment discovery service (docs/xds.md, Proxy metrics and monitoring
// assignments): the xDS REST protocol that Prometheus's `kuma_sd_configs` polls at
// `/v3/discovery:monitoringassignments`. Each proxy of every mesh with a prometheus backend
// enabled is one target, labelled with its mesh, service and tags. A request whose `version_info`
// is the current version waits (`fetch-timeout`, else `monitoringAssignmentServer.defaultFetchTimeout`)
// for the answer to change, and gets 304 when it does not.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody } from '@mesh/http-api';
import { type DataplaneSpec, dataplaneKind, dataplanePrometheusSettings, dataplaneTagSets, meshKind, type MeshSpec, parseDurationNanos, SERVICE_TAG } from '@mesh/model';
import type { ResourceReader } from '@mesh/store';

export const MONITORING_ASSIGNMENTS_PATH = '/v3/discovery:monitoringassignments';
/** The resource type Prometheus expects: the reference's message name, which its client knows. */
export const MONITORING_ASSIGNMENT_TYPE = 'type.googleapis.com/kuma.observability.v1.MonitoringAssignment';

/** A target as Prometheus reads it (proto field names). */
export interface MonitoringTarget {
  name: string;
  scheme: string;
  address: string;
  metrics_path: string;
  labels: Record<string, string>;
}

export interface MonitoringAssignment {
  mesh: string;
  service: string;
  targets: MonitoringTarget[];
  labels: Record<string, string>;
}

export interface ProxyOfMesh {
  mesh: string;
  name: string;
  spec: DataplaneSpec;
}

const DEFAULT_METRICS_PORT = 5670;
const DEFAULT_METRICS_PATH = '/metrics';

/** Prometheus's label names: anything but letters, digits and `_` becomes `_`. */
const labelName = (key: string) => key.replace(/[^a-zA-Z0-9_]/g, '_');

const joinHostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** Each tag key with its distinct values, sorted, over all the tag sets of the proxy. */
function tagValues(spec: DataplaneSpec): Map<string, string[]> {
  const values = new Map<string, Set<string>>();
  for (const tags of dataplaneTagSets(spec)) {
    for (const [key, value] of Object.entries(tags)) values.set(key, (values.get(key) ?? new Set()).add(value));
  }
  return new Map([...values.keys()].sort().map((key) => [key, [...values.get(key)!].sort()]));
}

/**
 * The labels of a proxy's target: each tag under its label name with its first value, and under
 * its plural (`service` → `services`) with all of them as `,a,b,`, the form Prometheus queries
 * match with `=~".*,a,.*"`. A tag named like another's plural wins over the generated plural.
 */
function proxyLabels(values: Map<string, string[]>): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [key, list] of values) {
    labels[labelName(key)] = list[0] ?? '';
    labels[labelName(`${key}s`)] = `,${list.join(',')},`;
  }
  return labels;
}

/** One assignment per proxy of a mesh that enables a prometheus backend, in mesh and name order. */
export function monitoringAssignments(meshes: ReadonlyMap<string, MeshSpec>, proxies: readonly ProxyOfMesh[]): MonitoringAssignment[] {
  const assignments: MonitoringAssignment[] = [];
  const ordered = [...proxies].sort((a, b) => (a.mesh === b.mesh ? (a.name < b.name ? -1 : 1) : a.mesh < b.mesh ? -1 : 1));
  for (const proxy of ordered) {
    const mesh = meshes.get(proxy.mesh);
    const settings = mesh && dataplanePrometheusSettings(mesh, proxy.spec.metrics);
    if (!settings) continue;
    const values = tagValues(proxy.spec);
    const networking = proxy.spec.networking;
    assignments.push({
      mesh: proxy.mesh,
      service: values.get(SERVICE_TAG)?.[0] ?? 'unknown',
      targets: [
        {
          name: proxy.name,
          scheme: settings.tls?.mode === 'providedTLS' ? 'https' : 'http',
          address: joinHostPort(networking?.advertisedAddress || networking?.address || '', settings.port || DEFAULT_METRICS_PORT),
          metrics_path: settings.path || DEFAULT_METRICS_PATH,
          labels: proxyLabels(values),
        },
      ],
      labels: {},
    });
  }
  return assignments;
}

interface Snapshot {
  version: string;
  body: string;
}

export interface MonitoringAssignmentServiceOptions {
  store: ResourceReader;
  /** Used when a request has no `fetch-timeout`. */
  defaultFetchTimeoutMs: number;
  /** How soon requests waiting for a change learn of one: changes of meshes and proxies are gathered for this long. */
  refreshIntervalMs: number;
  onError: (error: unknown) => void;
}

/** The largest body a discovery request may have. */
const MAX_REQUEST_BYTES = 1024 * 1024;
/** The longest wait a timer can hold. */
const MAX_WAIT_MS = 2 ** 31 - 1;

class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    detail: string,
  ) {
    super(detail);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // The rest of a body too large is read and dropped, so that the answer reaches the client.
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_REQUEST_BYTES) reject(new RequestError(413, 'Could not parse request body', `the request body is larger than ${MAX_REQUEST_BYTES} bytes`));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

/** The `version_info` of a DiscoveryRequest (proto or JSON field name). */
function requestedVersion(text: string): string {
  let request: unknown;
  try {
    request = JSON.parse(text);
  } catch (error) {
    throw new RequestError(400, 'Could not parse request body', (error as Error).message);
  }
  if (request === null || typeof request !== 'object' || Array.isArray(request)) throw new RequestError(400, 'Could not parse request body', 'expected a DiscoveryRequest JSON object');
  const { version_info: snake, versionInfo: camel } = request as Record<string, unknown>;
  const version = snake ?? camel ?? '';
  if (typeof version !== 'string') throw new RequestError(400, 'Could not parse request body', 'version_info: expected a string');
  return version;
}

export class MonitoringAssignmentService {
  private snapshot: Snapshot | undefined;
  private refreshing: Promise<void> | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  /** A mesh or proxy changed since the assignments were last made. */
  private stale = false;
  /** Requests waiting for a change; told `true` when the service stops. */
  private readonly waiters = new Set<(stopping: boolean) => void>();
  private readonly unsubscribe: () => void;

  constructor(private readonly options: MonitoringAssignmentServiceOptions) {
    this.unsubscribe = options.store.onChange((change) => {
      if (change.type === meshKind.name || change.type === dataplaneKind.name) this.scheduleRefresh();
    });
  }

  /** Answers the waiting requests at once (nothing changed) and follows the store no more. */
  stop(): void {
    this.unsubscribe();
    clearTimeout(this.refreshTimer);
    for (const wake of [...this.waiters]) wake(true);
  }

  /** The HTTP handler of the service. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.answer(req, res).catch((error: unknown) => {
      if (error instanceof RequestError) {
        this.sendJson(res, error.status, JSON.stringify(errorBody(error.status, error.title, error.message)));
        return;
      }
      this.options.onError(error);
      this.sendJson(res, 500, JSON.stringify(errorBody(500, 'Could not fetch MonitoringAssignments', 'Internal Server Error')));
    });
  };

  private sendJson(res: ServerResponse, status: number, json: string): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(json);
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== MONITORING_ASSIGNMENTS_PATH) throw new RequestError(404, 'Not found', `no such path: ${url.pathname}; monitoring assignments are served at POST ${MONITORING_ASSIGNMENTS_PATH}`);
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      throw new RequestError(405, 'Method not allowed', `${req.method ?? ''} is not allowed; use POST`);
    }
    const timeoutText = url.searchParams.get('fetch-timeout');
    const timeoutNanos = timeoutText === null ? this.options.defaultFetchTimeoutMs * 1e6 : parseDurationNanos(timeoutText);
    if (timeoutNanos === undefined) throw new RequestError(400, 'Could not parse fetch-timeout', `expected a duration such as 30s or 2m0s, got "${timeoutText}"`);
    const version = requestedVersion(await readBody(req));
    let snapshot = await this.current();
    if (version === snapshot.version && timeoutNanos > 0) {
      snapshot = await this.changeAfter(snapshot.version, Math.min(timeoutNanos / 1e6, MAX_WAIT_MS), req);
    }
    if (version === snapshot.version) {
      if (!res.destroyed) res.writeHead(304).end();
      return;
    }
    this.sendJson(res, 200, snapshot.body);
  }

  /** The assignments now: made again first when something changed since. */
  private async current(): Promise<Snapshot> {
    if (!this.snapshot || this.stale) await this.refresh();
    return this.snapshot!;
  }

  /** Resolves with the snapshot once its version is no longer `version`, or with the current one after `waitMs` or when the client leaves. */
  private changeAfter(version: string, waitMs: number, req: IncomingMessage): Promise<Snapshot> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        req.socket.off('close', done);
        resolve(this.snapshot!);
      };
      const wake = (stopping: boolean) => {
        if (stopping || this.snapshot?.version !== version) done();
      };
      const timer = setTimeout(done, waitMs);
      this.waiters.add(wake);
      req.socket.once('close', done);
    });
  }

  /** Waiting requests learn of changes within the refresh interval; other requests see them at once. */
  private scheduleRefresh(): void {
    this.stale = true;
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      if (this.stale) this.refresh().catch(this.options.onError);
    }, this.options.refreshIntervalMs);
  }

  private refresh(): Promise<void> {
    this.refreshing ??= this.build()
      .catch((error: unknown) => {
        // Made again on the next request.
        this.stale = true;
        throw error;
      })
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async build(): Promise<void> {
    const { store } = this.options;
    this.stale = false;
    const meshes = new Map<string, MeshSpec>();
    for (const mesh of (await store.list({ type: meshKind.name, offset: 0, size: 0 })).items) meshes.set(mesh.name, JSON.parse(mesh.spec) as MeshSpec);
    const proxies: ProxyOfMesh[] = [];
    for (const [mesh, spec] of meshes) {
      if (!dataplanePrometheusSettings(spec, undefined)) continue;
      const page = await store.list({ type: dataplaneKind.name, mesh, offset: 0, size: 0 });
      for (const item of page.items) proxies.push({ mesh, name: item.name, spec: JSON.parse(item.spec) as DataplaneSpec });
    }
    const resources = monitoringAssignments(meshes, proxies).map((assignment) => ({ '@type': MONITORING_ASSIGNMENT_TYPE, ...assignment }));
    const version = createHash('sha256').update(JSON.stringify(resources)).digest('hex').slice(0, 16);
    if (version === this.snapshot?.version) return;
    this.snapshot = { version, body: JSON.stringify({ version_info: version, resources, type_url: MONITORING_ASSIGNMENT_TYPE }) };
    for (const wake of [...this.waiters]) wake(false);
  }
}
