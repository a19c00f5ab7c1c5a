// The OpenAPI document and the reference page (docs/api.md, OpenAPI): the document is valid, lists
// exactly the routes the server registers, and every example it documents succeeds against a real
// API on a real store.
import SwaggerParser from '@apidevtools/swagger-parser';
import { KINDS } from '@mesh/model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createRouteTable } from '../api.js';
import { startApi, type Reply, type TestApi } from '../testing.js';
import { exampleOf } from './examples.js';

type Json = Record<string, any>;

interface Operation {
  method: string;
  path: string;
  operation: Json;
}

const METHODS = ['get', 'put', 'post', 'delete'];

const operationsOf = (document: Json): Operation[] =>
  Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ method: method.toUpperCase(), path, operation: item[method] as Json })),
  );

const successStatuses = (operation: Json): number[] => Object.keys(operation.responses).filter((status) => /^2\d\d$/.test(status)).map(Number);

/** The request an operation's examples describe: path captures and query values from its parameters, the body from its request body. */
function exampleRequest({ path, operation }: Operation): { url: string; body?: unknown; missing: string[] } {
  const missing: string[] = [];
  const query = new URLSearchParams();
  let url = path;
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in === 'path') {
      if (parameter.example === undefined) missing.push(parameter.name);
      else url = url.replace(`{${parameter.name}}`, encodeURIComponent(parameter.example));
    } else if (parameter.in === 'query' && parameter.example !== undefined) query.set(parameter.name, parameter.example);
  }
  const body = operation.requestBody?.content?.['application/json']?.example;
  if (operation.requestBody && body === undefined) missing.push('body');
  return { url: query.size > 0 ? `${url}?${query.toString()}` : url, ...(body !== undefined ? { body } : {}), missing };
}

let api: TestApi;
let global: TestApi;
let document: Json;

beforeAll(async () => {
  api = await startApi();
  global = await startApi({ mode: 'global' });
  const reply = await api.get('/openapi.json');
  expect(reply.status).toBe(200);
  document = reply.body;
}, 60_000);

afterAll(async () => {
  await api?.close();
  await global?.close();
});

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(document) as unknown as Parameters<typeof SwaggerParser.validate>[0])).resolves.toBeDefined();
  });

  it('documents exactly the routes the server registers, itself included', () => {
    const registered = createRouteTable(api.ctx)
      .routes()
      .map((route) => `${route.method} ${route.path}`);
    const documented = operationsOf(document).map(({ method, path }) => `${method} ${path}`);
    expect(new Set(registered).size).toBe(registered.length);
    expect([...documented].sort()).toEqual([...registered].sort());
    for (const own of ['GET /openapi.json', 'GET /openapi.yaml', 'GET /docs', 'GET /docs/{asset}']) expect(documented).toContain(own);
  });

  it('describes every kind of the registry: its body, its resource with timestamps, its list', () => {
    const schemas = document.components.schemas as Json;
    for (const kind of KINDS.filter((k) => !k.computed)) {
      expect(schemas, kind.name).toHaveProperty(`${kind.name}List`);
      const resource = JSON.stringify(schemas[kind.name]);
      expect(resource).toContain('"creationTime"');
      expect(resource).toContain('"modificationTime"');
      // Runtime state is never written through the API, so it has no body.
      if (kind.readOnly) expect(schemas).not.toHaveProperty(`${kind.name}Body`);
      else expect(JSON.stringify(schemas[`${kind.name}Body`])).toContain('"labels"');
    }
    const put = document.paths['/meshes/{mesh}/traffic-routes/{name}'].put;
    expect(put.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TrafficRouteBody' });
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['200', '201', '400', '409', 'default']));
    expect(put.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    const list = document.paths['/meshes/{mesh}/dataplanes'].get;
    expect(list.parameters.map((p: Json) => p.name)).toEqual(['mesh', 'size', 'offset', 'name', 'tag', 'gateway']);
    expect(JSON.stringify(schemas.TrafficRouteSpec)).toContain('"split"');
  });

  it('is served as YAML too, the same document', async () => {
    const reply = await api.request('GET', '/openapi.yaml', { headers: { accept: 'application/yaml' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(parse(reply.text)).toEqual(document);
  });

  it('describes the change stream: its filters and its events', () => {
    const events = document.paths['/events'].get;
    expect(events.parameters.map((p: Json) => p.name)).toEqual(['type', 'mesh', 'name', 'initial', 'since']);
    expect(Object.keys(events.responses['200'].content)).toEqual(['text/event-stream']);
    expect(document.components.schemas.ChangeEvent.required).toEqual(['revision', 'type', 'name']);
  });

  it('is announced by GET /', async () => {
    expect((await api.get('/')).body).toMatchObject({ openapi: '/openapi.json', docs: '/docs' });
  });
});

describe('the documented examples', () => {
  it('have a value for every path capture and body of each operation that can succeed', () => {
    const incomplete = operationsOf(document)
      .filter(({ operation }) => successStatuses(operation).length > 0)
      .map((op) => ({ op: `${op.method} ${op.path}`, missing: exampleRequest(op).missing }))
      .filter(({ missing }) => missing.length > 0);
    // A kind without an example names itself here: give its descriptor an `example` (packages/model/src/kinds).
    expect(incomplete).toEqual([]);
  });

  it("are each kind's own, from its descriptor: the captures of its paths and the body of its PUT", () => {
    for (const kind of KINDS.filter((k) => !k.computed)) {
      const example = kind.example;
      expect(example, kind.name).toBeDefined();
      const meta = example!.mesh !== undefined ? { mesh: example!.mesh, name: example!.name } : { name: example!.name };
      const entity = document.paths[`${kind.scope === 'mesh' ? `/meshes/{mesh}/${kind.path}` : `/${kind.path}`}/{name}`];
      const captures = Object.fromEntries(entity.get.parameters.filter((p: Json) => p.in === 'path').map((p: Json) => [p.name, p.example]));
      expect(captures, kind.name).toEqual(meta);
      if (!kind.readOnly) expect(entity.put.requestBody.content['application/json'].example, kind.name).toEqual({ type: kind.acceptedTypes[0], ...meta, ...example!.spec });
    }
  });

  it('only the writes of runtime state, which always answer 405, document no success', () => {
    const refusing = operationsOf(document).filter(({ operation }) => successStatuses(operation).length === 0);
    expect(refusing.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(
      KINDS.filter((kind) => kind.readOnly && !kind.computed)
        .flatMap((kind) => {
          const list = kind.scope === 'mesh' ? `/meshes/{mesh}/${kind.path}` : `/${kind.path}`;
          return [`DELETE ${list}/{name}`, `PUT ${list}/{name}`];
        })
        .sort(),
    );
    for (const { operation } of refusing) expect(Object.keys(operation.responses)).toContain('405');
  });

  it('succeed when sent in order: writes, then reads and token requests, then deletes in reverse', async () => {
    // Runtime state exists once its proxy or zone has connected; stand in for that connection.
    for (const kind of KINDS.filter((k) => k.readOnly && !k.computed)) {
      const example = exampleOf(kind);
      if (example) await api.store.create({ type: kind.name, mesh: example.mesh ?? '', name: example.name, spec: '{}' });
    }
    const routes = createRouteTable(api.ctx).routes();
    // A stream never ends; events.test.ts follows it.
    const isStream = (operation: Json) => operation.responses['200']?.content?.['text/event-stream'] !== undefined;
    const operations = operationsOf(document).filter(({ operation }) => successStatuses(operation).length > 0 && !isStream(operation));
    const phase = (method: string) => (method === 'PUT' ? 0 : method === 'DELETE' ? 2 : 1);
    const ordered = [
      ...operations.filter((op) => phase(op.method) === 0),
      ...operations.filter((op) => phase(op.method) === 1),
      ...operations.filter((op) => phase(op.method) === 2).reverse(),
    ];
    const failures: string[] = [];
    const needing: string[] = [];
    for (const op of ordered) {
      const doc = routes.find((route) => route.method === op.method && route.path === op.path)?.doc;
      const target = doc?.modes && !doc.modes.includes('standalone') ? global : api;
      const { url, body } = exampleRequest(op);
      const reply: Reply = await target.request(op.method, url, body !== undefined ? { body } : {});
      // What this test cannot provide (a running proxy): the route is reached and says it is unavailable.
      const expected = doc?.example?.needs ? [503] : successStatuses(op.operation);
      if (doc?.example?.needs) needing.push(`${op.method} ${op.path}`);
      if (!expected.includes(reply.status)) failures.push(`${op.method} ${url}: ${reply.status} ${reply.text.slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
    // Only the live views of a proxy need more than the examples: Envoy's own admin answers.
    expect(needing.every((operation) => /\/(stats|clusters)$/.test(operation))).toBe(true);
  }, 60_000);
});

describe('the reference page', () => {
  it('serves a page whose scripts and styles load from this server, with no inline script', async () => {
    const page = await api.request('GET', '/docs', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toMatch(/script-src[^;]*unsafe-inline/);
    const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, content] of scripts) {
      expect(attributes).toMatch(/src="/);
      expect(content!.trim()).toBe('');
    }
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(expect.arrayContaining(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/reference.js']));
    const expectedType: Record<string, RegExp> = { js: /^text\/javascript/, css: /^text\/css/, png: /^image\/png/ };
    for (const asset of assets) {
      expect(asset.startsWith('/'), asset).toBe(true);
      const reply = await fetch(api.url + asset);
      expect(reply.status, asset).toBe(200);
      expect(reply.headers.get('content-type'), asset).toMatch(expectedType[asset.split('.').pop()!]!);
      expect((await reply.arrayBuffer()).byteLength, asset).toBeGreaterThan(0);
    }
    // The page's own script starts Swagger UI on this server's document.
    const script = await (await fetch(`${api.url}/docs/reference.js`)).text();
    expect(script).toContain('SwaggerUIBundle(');
    expect(script).toContain('"/openapi.json"');
    expect(await (await fetch(`${api.url}/docs/swagger-ui-bundle.js`)).text()).toContain('SwaggerUIBundle');
  });

  it('answers an unknown file of the page with 404', async () => {
    expect((await api.get('/docs/..%2F..%2Fpackage.json')).status).toBe(404);
    expect((await api.get('/docs/index.html')).status).toBe(404);
  });
});
