// The OpenAPI 3.1 document of the API, built from the route table: every route with the
// documentation it carries (src/route-doc.ts), its schemas converted by zod's JSON Schema output
// (draft 2020-12, the dialect of OpenAPI 3.1). Nothing is written by hand, so the document lists
// exactly the routes the server answers, itself included (docs/api.md, OpenAPI).
import { z } from 'zod';
import type { ErrorStatus, QueryParameter, RouteDoc } from '../route-doc.js';
import type { Route } from '../route-table.js';
import { ErrorBodySchema, namedComponents } from './schemas.js';

type Json = Record<string, unknown>;

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
}

const ERRORS: Record<ErrorStatus | 401 | 406 | 408 | 431, string> = {
  400: 'Bad input: a malformed body or parameter, or a resource that breaks rules (every violation in `causes`, with its field path).',
  401: 'A bearer token that does not verify.',
  403: 'The caller may not do this.',
  404: 'Not found.',
  405: 'This control plane does not write it (its mode, or a read-only API).',
  406: "`Accept` allows neither JSON nor the route's own media type.",
  408: 'The request line, headers or body did not arrive in time (`apiServer.readHeaderTimeout`, `apiServer.readTimeout`).',
  409: 'A resource of that name exists already, or it changed since it was read.',
  413: 'A body over the limit (`apiServer.maxRequestBodySize`, 8 MiB unless configured).',
  415: 'A body that is not `application/json`.',
  431: 'Request line and headers larger than the server reads.',
  503: 'The store is unreachable or full, or too many requests are in flight (`apiServer.maxConcurrentRequests`).',
};

/**
 * What any route may answer besides its own: a token that does not verify, an `Accept` it cannot
 * serve, a request too slow or too large to read, too many requests at once (docs/api.md, Limits).
 */
const ANY_ROUTE_ERRORS = [401, 406, 408, 431, 503] as const;

const COMPONENT_REF = '#/components/schemas/';
const INLINE_ID = '__inline_';

/** Schemas of operations, converted in one pass with the named components so they can refer to them. */
class SchemaConverter {
  private readonly registry = z.registry<{ id: string }>();
  private readonly inline = new Map<z.ZodType, string>();
  private converted: Record<string, Json> | undefined;

  constructor() {
    for (const [schema, id] of namedComponents()) this.registry.add(schema, { id });
  }

  /** Registers a schema an operation uses; its JSON Schema is read with `jsonOf` after `convert`. */
  use(schema: z.ZodType): void {
    if (namedComponents().has(schema) || this.inline.has(schema)) return;
    const id = `${INLINE_ID}${this.inline.size}`;
    this.inline.set(schema, id);
    this.registry.add(schema, { id });
  }

  convert(): void {
    const { schemas } = z.toJSONSchema(this.registry, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any', uri: (id) => `${COMPONENT_REF}${id}` });
    this.converted = {};
    for (const [id, schema] of Object.entries(schemas)) {
      const { $schema: _dialect, $id: _id, ...rest } = schema as Json;
      this.converted[id] = rest;
    }
  }

  /** A named schema as a reference, another one inline. */
  jsonOf(schema: z.ZodType): Json {
    const named = namedComponents().get(schema);
    if (named !== undefined) return { $ref: `${COMPONENT_REF}${named}` };
    return this.resolveInline(this.converted![this.inline.get(schema)!]!);
  }

  /** The named components that `paths` refers to, directly or through each other. */
  components(paths: Json): Record<string, Json> {
    const reached = new Set<string>();
    const pending = referencedIds(paths);
    while (pending.length > 0) {
      const id = pending.pop()!;
      if (reached.has(id)) continue;
      reached.add(id);
      pending.push(...referencedIds(this.converted![id]!));
    }
    const components: Record<string, Json> = {};
    for (const id of [...reached].filter((id) => !id.startsWith(INLINE_ID)).sort()) components[id] = this.resolveInline(this.converted![id]!);
    return components;
  }

  /** Operation schemas are not components: a reference to one (a schema used twice) becomes a copy. */
  private resolveInline(json: Json): Json {
    return JSON.parse(JSON.stringify(json), (_key, value: unknown) => {
      if (value !== null && typeof value === 'object' && typeof (value as Json).$ref === 'string') {
        const ref = (value as Json).$ref as string;
        if (ref.startsWith(`${COMPONENT_REF}${INLINE_ID}`)) return this.resolveInline(this.converted![ref.slice(COMPONENT_REF.length)]!);
      }
      return value;
    }) as Json;
  }
}

/** The components a JSON value refers to. */
function referencedIds(json: Json): string[] {
  const ids: string[] = [];
  JSON.stringify(json, (key, value: unknown) => {
    if (key === '$ref' && typeof value === 'string' && value.startsWith(COMPONENT_REF)) ids.push(value.slice(COMPONENT_REF.length));
    return value;
  });
  return ids;
}

const captures = (path: string): string[] => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

const PATH_PARAMETER_DESCRIPTIONS: Record<string, string> = {
  mesh: 'The name of the mesh.',
  name: 'The name of the resource.',
  asset: 'A file of the reference page.',
};

/** `GET /meshes/{mesh}/traffic-routes/{name}` is `get_meshes_mesh_traffic-routes_name`: unique, readable in a URL. */
const operationId = (route: Route): string =>
  [route.method.toLowerCase(), ...route.path.split('/').filter(Boolean).map((segment) => segment.replace(/[{}]/g, '').replace(/[^\w-]/g, '-'))].join('_');

function parameters(route: Route, converter: SchemaConverter): Json[] {
  const example = route.doc.example;
  const path = captures(route.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    description: PATH_PARAMETER_DESCRIPTIONS[name] ?? name,
    schema: { type: 'string' },
    ...(example?.params?.[name] !== undefined ? { example: example.params[name] } : {}),
  }));
  const query = (route.doc.query ?? []).map((parameter: QueryParameter) => {
    const schema = converter.jsonOf(parameter.schema);
    return {
      name: parameter.name,
      in: 'query',
      required: false,
      description: parameter.description,
      ...(parameter.repeated ? { schema: { type: 'array', items: schema }, style: 'form', explode: true } : { schema }),
      ...(example?.query?.[parameter.name] !== undefined ? { example: example.query[parameter.name] } : {}),
    };
  });
  return [...path, ...query];
}

function responses(doc: RouteDoc, converter: SchemaConverter): Json {
  const answers: Json = {};
  for (const [status, response] of Object.entries(doc.responses)) {
    answers[status] = { description: response.description, content: { [response.mediaType ?? 'application/json']: { schema: converter.jsonOf(response.schema) } } };
  }
  const error = { content: { 'application/json': { schema: converter.jsonOf(ErrorBodySchema) } } };
  for (const status of [...new Set([...doc.errors, ...ANY_ROUTE_ERRORS])].sort((a, b) => a - b)) answers[String(status)] = { description: ERRORS[status], ...error };
  answers.default = { description: 'Any other failure (500), with the same body.', ...error };
  return answers;
}

function operation(route: Route, converter: SchemaConverter): Json {
  const { doc } = route;
  const modes = doc.modes ? ` Served by a ${doc.modes.join(' or ')} control plane.` : '';
  const needs = doc.example?.needs ? ` The example needs ${doc.example.needs}.` : '';
  const description = `${doc.description ?? ''}${modes}${needs}`.trim();
  return {
    operationId: operationId(route),
    summary: doc.summary,
    ...(description ? { description } : {}),
    tags: [doc.tag],
    parameters: parameters(route, converter),
    ...(doc.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: converter.jsonOf(doc.body), ...(doc.example?.body !== undefined ? { example: doc.example.body } : {}) } },
          },
        }
      : {}),
    responses: responses(doc, converter),
  };
}

/** The document of these routes. */
export function buildOpenApiDocument(routes: readonly Route[], info: DocumentInfo): Json {
  const converter = new SchemaConverter();
  converter.use(ErrorBodySchema);
  for (const { doc } of routes) {
    for (const parameter of doc.query ?? []) converter.use(parameter.schema);
    if (doc.body) converter.use(doc.body);
    for (const response of Object.values(doc.responses)) converter.use(response.schema);
  }
  converter.convert();

  const paths: Record<string, Json> = {};
  const tags = new Set<string>();
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, converter);
    tags.add(route.doc.tag);
  }
  return {
    openapi: '3.1.0',
    info,
    // Callers on the loopback interface are admins without a token (docs/tokens.md).
    security: [{}, { bearerAuth: [] }],
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: {
      schemas: converter.components(paths),
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A user token (`POST /tokens/user`).' } },
    },
  };
}
