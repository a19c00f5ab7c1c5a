// Property-based fuzz of every write endpoint (PUT and DELETE of every kind the route table
// documents, from the kind registry) and of the token endpoints, against the built zone binary.
// Bodies are valid ones (apps/zone/src/testing/examples.ts and the documented examples of
// /openapi.json) mutated: wrong types, missing and extra fields, huge strings, deep nesting, NUL
// and unicode, `__proto__`/`constructor` keys, numbers out of range, duplicate keys, invalid
// JSON, empty and 10 MB bodies, wrong content types; paths carry odd names (encoded slashes,
// `..`, very long names). Every answer is a 2xx or a 4xx with the standard error body, never a
// 5xx or a hang; the process stays up; the store holds exactly the accepted writes.
//
// FUZZ_RUNS sets the number of requests (a bounded number here; `npm run fuzz -- --runs N` for more),
// FUZZ_SEED replays a run.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES } from './testing/examples.js';
import { startControlPlane, type ControlPlaneProcess } from './testing/process.js';
import { sendRaw, standardErrorProblem, type RawReply } from './testing/raw-http.js';

const RUNS = Number(process.env.FUZZ_RUNS || 600);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

let cp: ControlPlaneProcess;

type Json = unknown;
type BodyOf = (mesh: string, name: string) => Json;

interface Endpoint {
  method: 'PUT' | 'DELETE' | 'POST';
  /** `/meshes/{mesh}/traffic-routes/{name}`, `/tokens/user`. */
  template: string;
  /** Valid bodies, for the mesh and name of the path. */
  validBodies: BodyOf[];
  /** The list of the kind across meshes, for endpoints that store what they accept. */
  listPath?: string;
}

/** A path segment as sent, and the text the server should decode it to (when there is one). */
interface Segment {
  raw: string;
  text: string | undefined;
}

/** Percent-encodes every byte of the UTF-8 form but the unreserved characters (lone surrogates as U+FFFD). */
const encodeSegment = (text: string): string =>
  [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const plain = (text: string): Segment => ({ raw: encodeSegment(text), text: LONE_SURROGATE.test(text) ? undefined : text });

const ODD_SEGMENTS = ['..', '.', '%2F', 'a%2Fb', '%2e%2e', '%2E', 'a%00b', '%FF', '%C3%28', '%ED%A0%80', '%', 'a%2', '%%', '~', 'a;b', 'a,b', 'a+b', '%20'];
const ODD_NAMES = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'Default', 'UPPER', '-a', 'a-', 'a..b', 'xn--a', '0', 'a'.repeat(253), 'a'.repeat(254)];

function segmentArb(pool: readonly string[]): fc.Arbitrary<Segment> {
  return fc.oneof(
    { weight: 16, arbitrary: fc.constantFrom(...pool).map(plain) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 16 }).map(plain) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 8 }).map((s) => plain(`a${s}\u0000${s}`)) },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_SEGMENTS).map((raw): Segment => ({ raw, text: undefined })) },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_NAMES).map(plain) },
    // Long names, past the 253 characters a name may have and past what a request line may carry.
    { weight: 1, arbitrary: fc.integer({ min: 254, max: 40_000 }).map((n) => plain('a'.repeat(n))) },
  );
}

/** Number literals JSON.stringify cannot write, put in place of a marker string after serialising. */
const RAW_NUMBER = '\u0001number:';
const RAW_NUMBERS = ['1e400', '-1e400', '123456789012345678901234567890', '1e-400', '-0.0', '4294967296', '9007199254740993', '2147483648'];

const nested = (depth: number): Json => {
  let value: Json = 'leaf';
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
};

/** An object whose own key is `key`, even for `__proto__`. */
const ownKey = (key: string, value: Json): Record<string, Json> => {
  const object: Record<string, Json> = {};
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
};

const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<Json>(0, -1, 1.5, 65_535, 65_536, 2 ** 31, 2 ** 32, 2 ** 53 + 2, 1e308, -1e308, -0, true, false, null, '', 'x', [], {}, [null], { '': '' }) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((n) => `${RAW_NUMBER}${n}`) },
  { weight: 2, arbitrary: fc.constantFrom('-1s', '0s', '1000000000000000h', '1.5.5s', 'NaNs', '1e9s', '999.1.1.1', '::::', '*', '**', 'http://', '0.0.0.0:99999', 'Mesh', 'MeshService', '%', '{{.x}}', '\\', '..') },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }).map((s) => `${s}\u0000${s}`) },
  { weight: 1, arbitrary: fc.integer({ min: 10_000, max: 1_000_000 }).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 120 }).map(nested) },
  { weight: 1, arbitrary: fc.constantFrom(ownKey('__proto__', { polluted: true }), { constructor: { prototype: { polluted: true } } }, ownKey('__proto__', null)) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

const KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '', 'a.b', '\u0000', 'type', 'mesh', 'name', 'labels', 'spec', 'conf', 'extra'];

interface Mutation {
  op: 'replace' | 'delete' | 'add';
  /** Which node of the body, counted depth-first (modulo their number). */
  at: number;
  key: string;
  value: Json;
}

const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom('replace', 'replace', 'delete', 'add'),
  at: fc.nat(),
  key: fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 12 })),
  value: hostileValue,
});

type RawVariant = 'empty' | 'truncated' | 'duplicate-key' | 'bom' | 'trailing' | 'nul-byte' | 'not-object' | 'ten-mb' | 'invalid-utf8' | 'whitespace';

interface BodyPlan {
  base: number;
  labels: boolean;
  mutations: Mutation[];
  raw: RawVariant | undefined;
  /** A fraction, for truncation; an index for the other variants. */
  pick: number;
  contentType: string | undefined;
}

const bodyPlanArb: fc.Arbitrary<BodyPlan> = fc.record({
  base: fc.nat(),
  labels: fc.boolean(),
  mutations: fc.oneof({ weight: 2, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 5, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 3 }) }),
  raw: fc.oneof(
    { weight: 12, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom<RawVariant>('empty', 'truncated', 'duplicate-key', 'duplicate-key', 'bom', 'trailing', 'nul-byte', 'not-object', 'invalid-utf8', 'whitespace') },
    { weight: 1, arbitrary: fc.constant<RawVariant>('ten-mb') },
  ),
  pick: fc.double({ min: 0, max: 1, noNaN: true }),
  contentType: fc.oneof(
    { weight: 16, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json-patch+json',
        'application/jsonx',
        '',
        ';;;',
      ),
    },
  ),
});

interface RequestPlan {
  /** Which endpoint, among the PUT and POST endpoints or among the DELETE ones. */
  endpoint: { deletes: boolean; index: number };
  mesh: Segment;
  name: Segment;
  meshName: Segment;
  body: BodyPlan;
  /** DELETE with a body now and then. */
  deleteBody: boolean;
}

const requestPlanArb: fc.Arbitrary<RequestPlan> = fc.record({
  // Writes more often than deletes, so that there is something to delete.
  endpoint: fc.record({ deletes: fc.constantFrom(false, false, false, true), index: fc.nat() }),
  mesh: segmentArb(['fuzz', 'fuzz', 'fuzz', 'default', 'absent']),
  name: segmentArb(['f-1', 'f-2', 'f-3']),
  meshName: segmentArb(['fuzz-2', 'fuzz-3', 'fuzz-2', 'fuzz-3', 'fuzz']),
  body: bodyPlanArb,
  deleteBody: fc.boolean(),
});

/** Every node of a JSON value: its container and key, depth-first. */
function nodesOf(value: Json): Array<{ parent: Record<string, Json> | Json[]; key: string | number }> {
  const found: Array<{ parent: Record<string, Json> | Json[]; key: string | number }> = [];
  const walk = (node: Json) => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => {
        found.push({ parent: node, key: i });
        walk(child);
      });
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        found.push({ parent: node as Record<string, Json>, key });
        walk(child);
      }
    }
  };
  walk(value);
  return found;
}

function containersOf(value: Json): Array<Record<string, Json> | Json[]> {
  const found: Array<Record<string, Json> | Json[]> = [];
  const walk = (node: Json) => {
    if (node === null || typeof node !== 'object') return;
    found.push(node as Record<string, Json> | Json[]);
    for (const child of Object.values(node)) walk(child);
  };
  walk(value);
  return found;
}

/** A copy, so that generated values are never shared (nor made cyclic) by mutations; own `__proto__` keys survive. */
const copy = (value: Json): Json => (value === undefined ? value : JSON.parse(JSON.stringify(value)));

function mutate(body: Json, generated: Mutation): Json {
  const mutation = { ...generated, value: copy(generated.value) };
  if (mutation.op === 'add') {
    const containers = containersOf(body);
    if (containers.length === 0) return body;
    const target = containers[mutation.at % containers.length]!;
    if (Array.isArray(target)) target.push(mutation.value);
    else Object.defineProperty(target, mutation.key, { value: mutation.value, enumerable: true, writable: true, configurable: true });
    return body;
  }
  const nodes = nodesOf(body);
  if (nodes.length === 0) return mutation.op === 'replace' ? mutation.value : body;
  const { parent, key } = nodes[mutation.at % nodes.length]!;
  if (mutation.op === 'replace') (parent as Record<string | number, Json>)[key] = mutation.value;
  else if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key as string];
  return body;
}

const serialise = (body: Json): string =>
  JSON.stringify(body).replace(new RegExp(`"${JSON.stringify(RAW_NUMBER).slice(1, -1).replace(/\\/g, '\\\\')}([^"]*)"`, 'g'), (_, n: string) => n);

const TEN_MB = 10 * 1024 * 1024;

/** The entry a fraction in [0, 1] picks. */
const pickOf = <T>(entries: readonly T[], fraction: number): T => entries[Math.min(entries.length - 1, Math.floor(fraction * entries.length))]!;

function bodyBytes(plan: BodyPlan, valid: Json): Buffer {
  let body = structuredClone(valid);
  if (plan.labels && body !== null && typeof body === 'object' && !Array.isArray(body)) (body as Record<string, Json>).labels = { team: 'fuzz', 'mesh.io/display-name': 'x' };
  for (const mutation of plan.mutations) body = mutate(body, mutation);
  const text = serialise(body);
  switch (plan.raw) {
    case undefined:
      return Buffer.from(text);
    case 'empty':
      return Buffer.alloc(0);
    case 'whitespace':
      return Buffer.from(' \n\t ');
    case 'truncated':
      return Buffer.from(text.slice(0, Math.floor(text.length * plan.pick)));
    case 'duplicate-key': {
      // The same key twice: the last one wins in JSON.parse; the server must not trip on it.
      const key = pickOf(['type', 'name', 'mesh', 'labels', 'spec', 'data'], plan.pick);
      return Buffer.from(text.startsWith('{') && text.length > 2 ? `{${JSON.stringify(key)}:${JSON.stringify(plan.pick > 0.5 ? 'other' : { a: 1 })},${text.slice(1)}` : text);
    }
    case 'bom':
      return Buffer.from(`\uFEFF${text}`);
    case 'trailing':
      return Buffer.from(`${text} }garbage`);
    case 'nul-byte': {
      const at = Math.floor(text.length * plan.pick);
      return Buffer.from(`${text.slice(0, at)}\u0000${text.slice(at)}`);
    }
    case 'not-object':
      return Buffer.from(pickOf(['null', '[]', '1', '"text"', 'true', '[{}]'], plan.pick));
    case 'invalid-utf8': {
      const at = Math.floor(text.length * plan.pick);
      return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from(text.slice(at))]);
    }
    case 'ten-mb':
      // Valid JSON of 10 MB: past the body limit (docs/api.md, HTTP).
      return Buffer.from(serialise({ ...(typeof body === 'object' && body !== null ? body : {}), padding: 'x'.repeat(TEN_MB) }));
  }
}

/** The endpoints that write, as /openapi.json documents them, with valid bodies for each. */
async function writeEndpoints(url: string): Promise<Endpoint[]> {
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
  const endpoints: Endpoint[] = [];
  for (const [template, operations] of Object.entries(doc.paths)) {
    for (const method of ['put', 'post', 'delete'] as const) {
      const operation = operations[method];
      if (!operation) continue;
      const documented = operation.requestBody?.content?.['application/json']?.example as Record<string, Json> | undefined;
      const validBodies: BodyOf[] = [];
      if (template.startsWith('/tokens')) {
        if (documented) validBodies.push(() => ({ ...documented, ...('mesh' in documented ? { mesh: 'default' } : {}) }));
        validBodies.push(() => ({ name: 'f-1', mesh: 'fuzz', groups: ['g'], zone: 'zone-1', scope: ['cp'], validFor: '1h' }));
      } else {
        const example = EXAMPLES.find((e) => `${e.path}/{name}` === template);
        const meta = (mesh: string, name: string) => ({ ...(template.includes('{mesh}') ? { mesh } : {}), name });
        if (example) {
          validBodies.push((mesh, name) => ({ type: example.type, ...meta(mesh, name), ...example.spec }));
          validBodies.push((mesh, name) => ({ type: example.type, ...meta(mesh, name), ...example.update }));
        }
        if (documented) validBodies.push((mesh, name) => ({ ...documented, ...meta(mesh, name) }));
      }
      if (validBodies.length === 0) validBodies.push(() => ({}));
      // A kind the API writes creates with 201; the others (runtime state) always answer 405.
      const stores = '201' in (operations.put?.responses ?? {});
      const listPath = stores ? `/${template.split('/').at(-2)}` : undefined;
      endpoints.push({ method: method.toUpperCase() as Endpoint['method'], template, validBodies, ...(listPath ? { listPath } : {}) });
    }
  }
  return endpoints;
}

/**
 * A resource as the fuzz compares it: what the control plane keeps up to date itself is left out
 * (a zone ingress's `availableServices`, and so its modification time; docs/multizone.md).
 */
function comparable(item: Record<string, Json>): string {
  if (item.type !== 'ZoneIngress') return JSON.stringify(item);
  const { availableServices: _services, modificationTime: _time, ...rest } = item;
  return JSON.stringify(rest);
}

/** The key of a stored resource: `list|mesh|name`, the mesh empty for a kind outside meshes. */
const storedKey = (listPath: string, resource: Record<string, Json>): string => `${listPath}|${typeof resource.mesh === 'string' ? resource.mesh : ''}|${String(resource.name)}`;

/** Every stored resource of the listed kinds, by `list|mesh|name`, as its list shows it. */
async function snapshot(listPaths: readonly string[]): Promise<Map<string, string>> {
  const stored = new Map<string, string>();
  for (const listPath of listPaths) {
    let next: string | null = `${cp.url}${listPath}?size=1000`;
    while (next) {
      const page = (await (await fetch(next)).json()) as { items: Array<Record<string, Json>>; next: string | null };
      for (const item of page.items) stored.set(storedKey(listPath, item), comparable(item));
      next = page.next;
    }
  }
  return stored;
}

const describeRequest = (method: string, path: string, contentType: string | undefined, body: Buffer | undefined) =>
  `${method} ${path.slice(0, 300)}${path.length > 300 ? `... (${path.length} characters)` : ''} [${contentType ?? 'no content-type'}] ${body ? `${body.length} bytes: ${body.subarray(0, 300).toString('utf8')}` : 'no body'}`;

beforeAll(async () => {
  cp = await startControlPlane();
  // The mesh most writes go to, with the logging and tracing backends the examples name.
  const mesh = {
    type: 'Mesh',
    name: 'fuzz',
    logging: { backends: ['file', 'tcp'].map((name) => ({ name, type: name, conf: name === 'file' ? { path: '/tmp/access.log' } : { address: '127.0.0.1:5000' } })) },
    tracing: { backends: ['zipkin', 'jaeger'].map((name) => ({ name, type: 'zipkin', conf: { url: 'http://zipkin.local:9411/api/v2/spans' } })) },
  };
  const created = await fetch(`${cp.url}/meshes/fuzz`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(mesh) });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await cp?.stop();
});

describe('fuzz of the write and token endpoints', () => {
  it(`answers ${RUNS} hostile requests with 2xx or a standard 4xx, and stores exactly what it accepted`, async () => {
    const endpoints = await writeEndpoints(cp.url);
    // Every kind the registry lets the API write, targetRef policies included, and the token endpoints.
    expect(endpoints.filter((e) => e.method === 'PUT' && e.listPath).length).toBeGreaterThanOrEqual(35);
    expect(endpoints.some((e) => e.template === '/meshes/{mesh}/meshtimeouts/{name}')).toBe(true);
    expect(endpoints.filter((e) => e.template.startsWith('/tokens')).length).toBe(10);
    const listPaths = [...new Set(endpoints.flatMap((e) => (e.listPath ? [e.listPath] : [])))];
    const writes = endpoints.filter((e) => e.method !== 'DELETE');
    const deletes = endpoints.filter((e) => e.method === 'DELETE');
    let model = await snapshot(listPaths);
    const tally = { accepted: 0, refused: 0, byStatus: new Map<number, number>() };

    const property = fc.asyncProperty(requestPlanArb, async (plan) => {
      const among = plan.endpoint.deletes ? deletes : writes;
      const endpoint = among[plan.endpoint.index % among.length]!;
      const isMeshEndpoint = endpoint.template === '/meshes/{name}';
      const name = isMeshEndpoint ? plan.meshName : plan.name;
      const path = endpoint.template.replace('{mesh}', plan.mesh.raw).replace('{name}', name.raw);
      const valid = endpoint.validBodies[plan.body.base % endpoint.validBodies.length]!(plan.mesh.text ?? 'fuzz', name.text ?? 'f-1');
      const withBody = endpoint.method !== 'DELETE' || plan.deleteBody;
      const body = withBody ? bodyBytes(plan.body, valid) : undefined;
      const contentType = withBody ? plan.body.contentType : undefined;
      const what = describeRequest(endpoint.method, path, contentType, body);

      let reply: RawReply;
      try {
        reply = await sendRaw(cp.url, { method: endpoint.method, path, ...(body ? { body } : {}), headers: contentType !== undefined ? { 'content-type': contentType } : {} });
      } catch (error) {
        throw new Error(`${what}\n  got no answer: ${(error as Error).message}\n${cp.output().slice(-2000)}`, { cause: error });
      }
      tally.byStatus.set(reply.status, (tally.byStatus.get(reply.status) ?? 0) + 1);
      if (reply.status >= 200 && reply.status < 300) {
        tally.accepted++;
      } else if (reply.status >= 400 && reply.status < 500) {
        tally.refused++;
        const problem = standardErrorProblem(reply);
        if (problem) throw new Error(`${what}\n  ${reply.status} without the standard error body: ${problem}`);
        return;
      } else {
        throw new Error(`${what}\n  answered ${reply.status}: ${reply.text.slice(0, 500)}`);
      }

      // Accepted: what the store should now hold.
      if (endpoint.template.startsWith('/tokens')) {
        expect(reply.headers['content-type']).toMatch(/^text\/plain/);
        expect(reply.text).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
        return;
      }
      if (!endpoint.listPath) throw new Error(`${what}\n  accepted by an endpoint that always refuses`);
      expect(JSON.parse(reply.text)).toSatisfy((answer: Record<string, Json>) => Object.keys(answer).every((key) => key === 'warnings'));
      if (isMeshEndpoint) {
        // A mesh comes with its defaults and goes with everything it owns: read it all again.
        model = await snapshot(listPaths);
        return;
      }
      const meshText = endpoint.template.includes('{mesh}') ? plan.mesh.text : '';
      if (endpoint.method === 'DELETE') {
        const key = `${endpoint.listPath}|${meshText}|${name.text}`;
        if (meshText === undefined || name.text === undefined || !model.delete(key)) throw new Error(`${what}\n  deleted ${key}, which was not stored`);
        return;
      }
      const read = await sendRaw(cp.url, { method: 'GET', path });
      if (read.status !== 200) throw new Error(`${what}\n  accepted, then GET answered ${read.status}: ${read.text.slice(0, 300)}`);
      const stored = JSON.parse(read.text) as Record<string, Json>;
      if (name.text !== undefined && stored.name !== name.text) throw new Error(`${what}\n  stored under name ${String(stored.name)}`);
      model.set(storedKey(endpoint.listPath, stored), comparable(stored));
    });

    await fc.assert(property, {
      numRuns: RUNS,
      ...(SEED !== undefined ? { seed: SEED } : {}),
      // Counterexamples hold strings of a megabyte: each line of the report is cut short.
      reporter: (details) => {
        if (!details.failed) return;
        const report = `${fc.defaultReportMessage(details)}\n${String(details.errorInstance)}`;
        throw new Error(report.split('\n').map((line) => (line.length > 2000 ? `${line.slice(0, 2000)}...` : line)).join('\n'));
      },
    });

    const root = await sendRaw(cp.url, { method: 'GET', path: '/' });
    expect(root.status).toBe(200);
    const stored = await snapshot(listPaths);
    expect([...stored.keys()].sort()).toEqual([...model.keys()].sort());
    for (const [key, value] of model) expect(stored.get(key), key).toBe(value);
    // Said once, so that a run shows how much of the input got through.
    console.info(`fuzz: ${RUNS} runs, ${tally.accepted} accepted, ${tally.refused} refused; statuses ${JSON.stringify(Object.fromEntries(tally.byStatus))}`);
    expect(tally.accepted).toBeGreaterThan(0);
  }, 60_000 + RUNS * 1000);
});
