// A declarative route table: method, path pattern, handler, and the route's documentation, from
// which the OpenAPI document is built. Matching is a walk down a trie of
// path segments, so the cost does not grow with the number of kinds, and a known path with an
// unregistered method is told apart from an unknown path (405 with Allow vs 404).
import type { Request, Response } from 'express';
import type { RouteDoc } from './route-doc.js';

export type Method = 'GET' | 'PUT' | 'DELETE' | 'POST';
export type Params = Record<string, string>;
export type Handler = (req: Request, res: Response, params: Params) => Promise<void> | void;

export interface Route {
  method: Method;
  /** Segments separated by '/'; `{name}` captures one segment. */
  path: string;
  handler: Handler;
  /** What the OpenAPI document says of it. */
  doc: RouteDoc;
  /**
   * For a GET whose 200 answer is made of stored data alone (the same for every caller, at any
   * time): the types whose writes change it, or `'any'` when it is derived from many (insights,
   * inspection). Its answers are kept whole and sent again until such a write (answer-cache.ts).
   */
  answerChangesWith?: readonly string[] | 'any';
}

interface Node {
  literals: Map<string, Node>;
  param?: Node;
  routes: Map<Method, Route>;
  /** Names of the captured segments of the routes ending here, in order. */
  paramNames: string[];
  /** The path of the routes ending here, as declared (`/meshes/{mesh}/dataplanes/{name}`). */
  template: string;
  /** The Allow header value of the routes ending here, kept as routes are added rather than joined per request. */
  allow: string;
}

const newNode = (): Node => ({ literals: new Map(), routes: new Map(), paramNames: [], template: '', allow: '' });

export interface RouteMatch {
  params: Params;
  routes: ReadonlyMap<Method, Route>;
  /** The declared path that matched, for metrics and logs (no resource names in it). */
  template: string;
  /** The Allow header value: the path's methods, in the order added. */
  allow: string;
}

export class RouteTable {
  private readonly root = newNode();
  private readonly added: Route[] = [];

  add(route: Route): this {
    let node = this.root;
    const paramNames: string[] = [];
    for (const segment of splitPath(route.path)) {
      const param = /^\{(\w+)\}$/.exec(segment)?.[1];
      if (param) {
        paramNames.push(param);
        node.param ??= newNode();
        node = node.param;
      } else {
        let next = node.literals.get(segment);
        if (!next) node.literals.set(segment, (next = newNode()));
        node = next;
      }
    }
    if (node.routes.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    if (node.routes.size > 0 && node.paramNames.join() !== paramNames.join()) throw new Error(`conflicting parameter names at ${route.path}`);
    node.routes.set(route.method, route);
    node.paramNames = paramNames;
    node.template = route.path;
    node.allow = [...node.routes.keys()].join(', ');
    this.added.push(route);
    return this;
  }

  /** Every route, in the order added. */
  routes(): readonly Route[] {
    return this.added;
  }

  /** The routes of the path (decoded segments; a trailing slash is ignored), or undefined. */
  match(path: string): RouteMatch | undefined {
    const segments = splitPath(path);
    for (let i = 0; i < segments.length; i++) {
      const decoded = decodeSegment(segments[i]!);
      if (decoded === undefined) return undefined;
      segments[i] = decoded;
    }
    const captured: string[] = [];
    const node = walk(this.root, segments, 0, captured);
    if (!node) return undefined;
    const params: Params = {};
    for (let i = 0; i < node.paramNames.length; i++) params[node.paramNames[i]!] = captured[i]!;
    return { params, routes: node.routes, template: node.template, allow: node.allow };
  }
}

/** Literal segments win over captures; backtracks when a literal branch leads nowhere. */
function walk(node: Node, segments: string[], at: number, captured: string[]): Node | undefined {
  if (at === segments.length) return node.routes.size > 0 ? node : undefined;
  const segment = segments[at]!;
  const literal = node.literals.get(segment);
  const found = literal && walk(literal, segments, at + 1, captured);
  if (found) return found;
  if (node.param && segment !== '') {
    captured.push(segment);
    const deeper = walk(node.param, segments, at + 1, captured);
    if (deeper) return deeper;
    captured.pop();
  }
  return undefined;
}

/** The segments between the leading and trailing slashes. */
function splitPath(path: string): string[] {
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 0x2f) start++;
  while (end > start && path.charCodeAt(end - 1) === 0x2f) end--;
  return start === end ? [] : path.slice(start, end).split('/');
}

/** A segment without escapes is its own decoding: most are, and decoding is a call into the runtime. */
function decodeSegment(segment: string): string | undefined {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
