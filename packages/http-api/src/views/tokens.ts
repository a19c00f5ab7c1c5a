// Token endpoints (docs/tokens.md): dataplane, zone-ingress, zone and user tokens, answered with
// the bare JWT as text/plain. Each checks parse, access and validation in the reference's order.
import { DomainError, formatDurationNanos, meshKind, parseDurationNanos, type Violation } from '@mesh/model';
import { SigningKeyNotFound } from '@mesh/tokens';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { callerOf, requireRule, type StaticRuleName } from '../access.js';
import { parseJsonBody, readBodyText } from '../body.js';
import type { ApiContext } from '../context.js';
import { badRequest } from '../errors.js';
import { withOperation } from '../handler.js';
import { EXAMPLE_MESH } from '../openapi/examples.js';
import { component } from '../openapi/schemas.js';
import type { RouteTable } from '../route-table.js';

const TEN_YEARS_SECONDS = 87_600 * 3600;
const PROXY_TYPES = ['', 'dataplane', 'ingress', 'egress'];
const DURATION_UNITS = ['ns', 'us', 'µs', 'μs', 'ms', 's', 'm', 'h'];

type Body = Record<string, unknown>;

/** The JSON object of a token request; malformed JSON or another shape is a 400 Bad Request. */
async function readTokenBody(ctx: ApiContext, req: Request): Promise<Body> {
  const body = parseJsonBody(await readBodyText(req, ctx.limits?.maxRequestBodySize), 'token request');
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest("invalid token request object: 'expected a JSON object'");
  return body as Body;
}

function field<T>(body: Body, name: string, check: (value: unknown) => value is T, expected: string): T | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (!check(value)) throw badRequest(`invalid token request object: '${name}: expected ${expected}'`);
  return value;
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const isTagMap = (value: unknown): value is Record<string, string[]> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.values(value).every(isStringList);

/** Go's `time.ParseDuration` messages, as the reference reports them. */
function durationProblem(text: string): string | undefined {
  if (parseDurationNanos(text) !== undefined) return undefined;
  const unit = /\d([^\d.]+)/.exec(text)?.[1];
  if (unit !== undefined && !DURATION_UNITS.includes(unit) && /^[+-]?(\d+(\.\d*)?|\.\d+)[a-zA-Zµμ]+$/.test(text)) {
    return `is invalid: time: unknown unit "${unit}" in duration "${text}"`;
  }
  return `is invalid: time: invalid duration "${text}"`;
}

/** `validFor` in seconds: the default when absent, violations for bad, zero and negative values. */
function validForSeconds(value: string | undefined, violations: Violation[], fallback: number | undefined): number {
  if (value === undefined || value === '') {
    if (fallback === undefined) violations.push({ field: 'validFor', message: 'cannot be empty' });
    return fallback ?? 0;
  }
  const problem = durationProblem(value);
  if (problem) {
    violations.push({ field: 'validFor', message: problem });
    return 0;
  }
  const nanos = parseDurationNanos(value)!;
  if (nanos === 0) violations.push({ field: 'validFor', message: 'cannot be empty or nil' });
  else if (nanos < 0) violations.push({ field: 'validFor', message: `must be positive, got ${formatDurationNanos(nanos)}` });
  return Math.floor(nanos / 1e9);
}

const invalidRequest = (violations: Violation[]) => new DomainError('invalid', 'Resource is not valid', { title: 'Invalid request', violations });

function check(violations: Violation[]): void {
  if (violations.length > 0) throw invalidRequest(violations);
}

function sendToken(res: Response, token: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/plain');
  res.end(token);
}

/** Issues with the service; a missing key is the reference's 404 `Signing Key not found`. */
async function issued(ctx: ApiContext, issue: (tokens: NonNullable<ApiContext['access']['tokens']>) => Promise<string>): Promise<string> {
  const tokens = ctx.access.tokens;
  if (!tokens) throw new DomainError('not_found', 'tokens are not issued by this control plane', { title: 'Signing Key not found' });
  try {
    return await issue(tokens);
  } catch (error) {
    if (error instanceof SigningKeyNotFound) throw new DomainError('not_found', error.message, { title: 'Signing Key not found' });
    throw error;
  }
}

const allow = (ctx: ApiContext, req: Request, rule: StaticRuleName) => requireRule(callerOf(req), ctx.access, rule);

async function dataplaneToken(ctx: ApiContext, req: Request, res: Response) {
  const body = await readTokenBody(ctx, req);
  const name = field(body, 'name', isString, 'a string') ?? '';
  const mesh = field(body, 'mesh', isString, 'a string') ?? '';
  const tags = field(body, 'tags', isTagMap, 'a map of tag names to lists of values') ?? {};
  const type = field(body, 'type', isString, 'a string') ?? '';
  const validFor = field(body, 'validFor', isString, 'a duration string') ?? undefined;
  const violations: Violation[] = [];
  if (mesh === '') violations.push({ field: 'mesh', message: 'cannot be empty' });
  if (!PROXY_TYPES.includes(type)) violations.push({ field: 'type', message: `${type} is not a valid proxy type` });
  const seconds = validForSeconds(validFor, violations, TEN_YEARS_SECONDS);
  check(violations);
  allow(ctx, req, 'generateDpToken');
  if (!(await ctx.manager.get(meshKind, '', mesh))) throw invalidRequest([{ field: 'mesh', message: `mesh of name ${mesh} is not found` }]);
  sendToken(res, await issued(ctx, (tokens) => tokens.issueDataplaneToken({ name, mesh, tags, type }, seconds)));
}

async function zoneIngressToken(ctx: ApiContext, req: Request, res: Response) {
  const body = await readTokenBody(ctx, req);
  const zone = field(body, 'zone', isString, 'a string') ?? '';
  const validFor = field(body, 'validFor', isString, 'a duration string');
  allow(ctx, req, 'generateDpToken');
  const violations: Violation[] = [];
  if (zone === '') violations.push({ field: 'zone', message: 'cannot be empty' });
  const seconds = validForSeconds(validFor, violations, TEN_YEARS_SECONDS);
  check(violations);
  sendToken(res, await issued(ctx, (tokens) => tokens.issueZoneIngressToken(zone, seconds)));
}

async function zoneToken(ctx: ApiContext, req: Request, res: Response) {
  const body = await readTokenBody(ctx, req);
  const zone = field(body, 'zone', isString, 'a string') ?? '';
  const scope = field(body, 'scope', isStringList, 'a list of strings');
  const validFor = field(body, 'validFor', isString, 'a duration string');
  allow(ctx, req, 'generateZoneToken');
  const violations: Violation[] = [];
  if (scope === undefined) violations.push({ field: 'scope', message: 'cannot be empty' });
  const seconds = validForSeconds(validFor, violations, TEN_YEARS_SECONDS);
  check(violations);
  sendToken(res, await issued(ctx, (tokens) => tokens.issueZoneToken({ zone, scope: scope ?? [] }, seconds)));
}

async function userToken(ctx: ApiContext, req: Request, res: Response) {
  allow(ctx, req, 'generateUserToken');
  const body = await readTokenBody(ctx, req);
  const name = field(body, 'name', isString, 'a string') ?? '';
  const groups = field(body, 'groups', isStringList, 'a list of strings') ?? [];
  const validFor = field(body, 'validFor', isString, 'a duration string');
  const violations: Violation[] = [];
  if (name === '') violations.push({ field: 'name', message: 'cannot be empty' });
  const seconds = validForSeconds(validFor, violations, undefined);
  check(violations);
  sendToken(res, await issued(ctx, (tokens) => tokens.issueUserToken({ name, groups }, seconds)));
}

const validFor = z.string().meta({ description: 'How long the token is valid, as a Go duration (`720h`).', example: '720h' });

const DataplaneTokenRequestSchema = component(
  'DataplaneTokenRequest',
  z.object({
    name: z.string().optional().meta({ description: 'The proxy it is for; any proxy of the mesh when left out.' }),
    mesh: z.string(),
    tags: z.record(z.string(), z.array(z.string())).optional().meta({ description: 'Tags the proxy must carry, each with its allowed values.' }),
    type: z.enum(['', 'dataplane', 'ingress', 'egress']).optional(),
    validFor: validFor.optional().meta({ description: 'Ten years when left out.' }),
  }),
);

const ZoneIngressTokenRequestSchema = component('ZoneIngressTokenRequest', z.object({ zone: z.string(), validFor: validFor.optional() }));

const ZoneTokenRequestSchema = component(
  'ZoneTokenRequest',
  z.object({ zone: z.string().optional(), scope: z.array(z.string()).meta({ description: 'What the token is for: `cp`, `ingress`, `egress`.' }), validFor: validFor.optional() }),
);

const UserTokenRequestSchema = component('UserTokenRequest', z.object({ name: z.string(), groups: z.array(z.string()).optional(), validFor }));

const TokenSchema = component('Token', z.string().meta({ description: 'A JWT (RS256).' }));

interface TokenEndpoint {
  path: string;
  issue: (ctx: ApiContext, req: Request, res: Response) => Promise<void>;
  summary: string;
  body: z.ZodType;
  example: Record<string, unknown>;
}

const USER_TOKEN = { issue: userToken, summary: 'Generate a user token', body: UserTokenRequestSchema, example: { name: 'jane', groups: ['team-a'], validFor: '24h' } };

const TOKEN_ENDPOINTS: readonly TokenEndpoint[] = [
  { path: '/tokens/dataplane', issue: dataplaneToken, summary: 'Generate a dataplane token', body: DataplaneTokenRequestSchema, example: { name: 'web-1', mesh: EXAMPLE_MESH, validFor: '720h' } },
  { path: '/tokens/zone-ingress', issue: zoneIngressToken, summary: 'Generate a zone ingress token', body: ZoneIngressTokenRequestSchema, example: { zone: 'zone-1', validFor: '720h' } },
  { path: '/tokens/zone', issue: zoneToken, summary: 'Generate a zone token', body: ZoneTokenRequestSchema, example: { zone: 'zone-1', scope: ['cp'], validFor: '720h' } },
  { path: '/tokens/user', ...USER_TOKEN },
  { path: '/tokens', ...USER_TOKEN },
];

export function addTokenRoutes(table: RouteTable, ctx: ApiContext): void {
  for (const { path, issue, summary, body, example } of TOKEN_ENDPOINTS) {
    for (const method of ['POST', 'PUT'] as const) {
      table.add({
        method,
        path,
        doc: {
          summary,
          description: `Answers the bare token as text. Allowed to the users and groups of its access rule (admins by default).${path === '/tokens' ? ' The older path of `/tokens/user`.' : ''}`,
          tag: 'Tokens',
          body,
          responses: { 200: { description: 'The token.', mediaType: 'text/plain', schema: TokenSchema } },
          errors: [400, 403, 404, 413, 415],
          example: { body: example },
        },
        handler: withOperation('process', (req, res) => issue(ctx, req, res)),
      });
    }
  }
}
