// CORS as `apiServer.corsAllowedDomains` configures it (docs/api.md, HTTP). No answer carries
// `Access-Control-Allow-Credentials`, so a page of another origin never reads an answer to a
// request its browser sent with the user's cookies or client certificate.
import type { Request, Response } from 'express';

/** Whether a page of `origin` may read answers; `null` (sandboxed frames, local files) never may. */
export function isOriginAllowed(origin: string, allowed: readonly string[]): boolean {
  const lower = origin.toLowerCase();
  if (lower === 'null') return false;
  if (allowed.length === 0) return true;
  return allowed.some((domain) => domain === '.*' || domain.toLowerCase() === lower);
}

/** Adds the CORS headers of an allowed origin; answers a preflight. Returns true when answered. */
export function applyCors(req: Request, res: Response, allowed: readonly string[], allowedMethods: string | undefined): boolean {
  const origin = req.get('origin');
  if (!origin || !isOriginAllowed(origin, allowed)) return false;
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Access-Control-Expose-Headers', 'Access-Control-Allow-Origin');
  const requestedMethod = req.get('access-control-request-method');
  if (req.method !== 'OPTIONS' || !requestedMethod) return false;
  const methods = allowedMethods?.split(', ') ?? [];
  if (methods.includes(requestedMethod.toUpperCase())) {
    res.setHeader('Access-Control-Allow-Methods', methods.join(','));
    // The reference allows no request headers at all, which breaks every browser PUT with a
    // JSON body; echoing what the browser asks for lets a front end on another origin write.
    const requestedHeaders = req.get('access-control-request-headers');
    if (requestedHeaders) res.setHeader('Access-Control-Allow-Headers', requestedHeaders);
  }
  res.statusCode = 200;
  res.end();
  return true;
}
