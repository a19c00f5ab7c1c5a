// The metrics socket (README.md, Metrics): Envoy's prometheus listener forwards each scrape to
// this HTTP server on a Unix socket, which asks Envoy's admin for its stats and each application
// the control plane named (the `aggregate` entries of the proxy's prometheus settings) for its
// metrics, and answers with all of them in one exposition.
import { rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { isIPv6 } from 'node:net';
import { CONTENT_TYPES, convertFamilies, type ExpositionFormat, formatOfContentType, mergeFamilies, type MetricFamily, parseExposition, selectFormat, writeExposition } from './exposition.js';
import type { Logger } from './log.js';

export interface ScrapeTarget {
  /** `envoy`, or the name of the aggregate entry. */
  name: string;
  address: string;
  port: number;
  path: string;
  /** Envoy's admin takes the scrape's query (`filter`, `usedonly`) and reads text readouts; applications get none. */
  envoyAdmin: boolean;
}

export interface MetricsHijackerOptions {
  socketPath: string;
  /** The applications first, Envoy last: where a series comes twice, the first source's is kept. */
  targets: readonly ScrapeTarget[];
  /** Under transparent proxying, requests to the applications come from the addresses its rules let through. */
  transparentProxying: boolean;
  log: Logger;
}

/** The headers of the scrape passed on to each source. */
const PASSED_HEADERS = ['accept', 'user-agent', 'x-prometheus-scrape-timeout-seconds'] as const;
/** Envoy's own route timeout, which a scrape waits at most, unless the scraper says less. */
const DEFAULT_SCRAPE_TIMEOUT_MS = 15_000;
/** The addresses transparent proxying's rules do not redirect. */
const PASS_THROUGH_SOURCE = { ipv4: '127.0.0.6', ipv6: '::6' };

interface Fetched {
  body: string;
  contentType: string | undefined;
}

function fetchSource(target: ScrapeTarget, scrape: IncomingMessage, transparentProxying: boolean, timeoutMs: number, signal: AbortSignal): Promise<Fetched> {
  const headers: Record<string, string> = {};
  for (const name of PASSED_HEADERS) {
    const value = scrape.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  let path = target.path.startsWith('/') ? target.path : `/${target.path}`;
  if (target.envoyAdmin) {
    const query = new URL(scrape.url ?? '/', 'http://localhost').searchParams;
    query.set('text_readouts', '');
    path += `?${query.toString()}`;
  }
  const ipv6 = isIPv6(target.address);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.address,
        port: target.port,
        path,
        headers,
        timeout: timeoutMs,
        signal,
        ...(transparentProxying && !target.envoyAdmin ? { localAddress: ipv6 ? PASS_THROUGH_SOURCE.ipv6 : PASS_THROUGH_SOURCE.ipv4 } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`answered ${res.statusCode}`));
          else resolve({ body: Buffer.concat(chunks).toString('utf8'), contentType: res.headers['content-type'] });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000}s`)));
    req.on('error', reject);
    req.end();
  });
}

function scrapeTimeoutMs(headers: IncomingHttpHeaders): number {
  const seconds = Number(headers['x-prometheus-scrape-timeout-seconds']);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, DEFAULT_SCRAPE_TIMEOUT_MS) : DEFAULT_SCRAPE_TIMEOUT_MS;
}

/** Says each source's trouble once, until it is over. */
class TroubleReporter {
  private readonly troubled = new Map<string, string>();

  constructor(private readonly log: Logger) {}

  trouble(source: string, message: string): void {
    if (this.troubled.get(source) === message) return;
    this.troubled.set(source, message);
    this.log('error', `metrics of ${source} left out of the scrape: ${message}`, { source });
  }

  fine(source: string): void {
    if (this.troubled.delete(source)) this.log('info', `metrics of ${source} are scraped again`, { source });
  }
}

/** Serves the socket until closed; resolves once it listens. */
export async function startMetricsHijacker(options: MetricsHijackerOptions): Promise<{ close(): Promise<void> }> {
  const reporter = new TroubleReporter(options.log);
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const timeoutMs = scrapeTimeoutMs(req.headers);
    // A scraper that gives up cancels the requests to the sources.
    const cancel = new AbortController();
    res.once('close', () => cancel.abort());
    const answers = await Promise.all(
      options.targets.map(async (target) => {
        try {
          return { target, fetched: await fetchSource(target, req, options.transparentProxying, timeoutMs, cancel.signal) };
        } catch (error) {
          if (cancel.signal.aborted) return undefined;
          reporter.trouble(target.name, `${target.address}:${target.port}${target.path}: ${(error as Error).message}`);
          return undefined;
        }
      }),
    );
    const parsed: Array<{ source: string; format: ExpositionFormat; families: MetricFamily[] }> = [];
    for (const answer of answers) {
      if (!answer) continue;
      const { target, fetched } = answer;
      const format = formatOfContentType(fetched.contentType);
      // An answer without a text format's content type is read as Prometheus text, as Envoy writes it.
      const result = parseExposition(fetched.body, format ?? 'text');
      if (result.skippedLines > 0) reporter.trouble(target.name, `lines of its answer (${fetched.contentType ?? 'no content type'}) that are no metrics`);
      else reporter.fine(target.name);
      parsed.push({ source: target.name, format: format ?? 'text', families: result.families });
    }
    const format = selectFormat(parsed.map((source) => source.format));
    const merged = mergeFamilies(parsed.map((source) => ({ source: source.source, families: convertFamilies(source.families, source.format, format) })));
    for (const conflict of merged.conflicts) {
      reporter.trouble(`${conflict.source}/${conflict.name}`, `the family ${conflict.name} is a ${conflict.type} there, a ${conflict.keptType} in an earlier source`);
    }
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': CONTENT_TYPES[format] });
    res.end(writeExposition(merged.families, format));
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.log('error', 'could not answer a scrape', { error: (error as Error).message });
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  // A socket left by a runner that did not stop cleanly would keep this one from listening.
  rmSync(options.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  options.log('info', 'serving the metrics socket', { socketPath: options.socketPath });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
