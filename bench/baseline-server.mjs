#!/usr/bin/env node
// A baseline server for bench/api.bench.mjs: serves the response bodies captured from the control
// plane, byte for byte, with no store and no validation behind them. `node:http` is the ceiling of
// what one Node process can serve; `express` adds only the framework the control plane is built on.
//
// Usage: node bench/baseline-server.mjs <node|express> <responses.json>
// Prints `listening <port>` on stdout once it accepts connections.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [flavour, responsesFile] = process.argv.slice(2);
/** @type {{ get: Record<string, string>, dataplaneNames: string[] }} GET bodies by request URL. */
const responses = JSON.parse(readFileSync(responsesFile, 'utf8'));
const getBodies = new Map(Object.entries(responses.get));
// PUT answers 200 for a name it has seen and 201 for a new one, as the control plane does; the
// body is `{}` either way. The request body is read (the control plane must read it) but not parsed.
const known = new Set(responses.dataplaneNames);
const DATAPLANE_PATH = /^\/meshes\/[^/]+\/dataplanes\/([^/?]+)$/;

function readBody(req, done) {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (text += chunk));
  req.on('end', () => done(text));
}

/** Answers like the control plane's `sendJson`: a status, `Content-Type: application/json`, the bytes. */
function sendJson(res, status, body) {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(body);
}

function put(name, res) {
  readBody(res.req, () => {
    const existed = known.has(name);
    if (!existed) known.add(name);
    sendJson(res, existed ? 200 : 201, '{}');
  });
}

function notFound(res) {
  sendJson(res, 404, '{"title":"Not Found"}');
}

let server;
if (flavour === 'node') {
  server = createServer((req, res) => {
    if (req.method === 'GET') {
      const body = getBodies.get(req.url);
      return body === undefined ? notFound(res) : sendJson(res, 200, body);
    }
    const match = req.method === 'PUT' ? DATAPLANE_PATH.exec(req.url) : null;
    return match ? put(decodeURIComponent(match[1]), res) : notFound(res);
  });
} else if (flavour === 'express') {
  const { default: express } = await import('express');
  const app = express();
  // The control plane turns these off too (no ETag hashing of bodies, no X-Powered-By), so the
  // two send the same headers and the difference is the work behind the route.
  app.disable('x-powered-by');
  app.set('etag', false);
  const fromCapture = (req, res) => {
    const body = getBodies.get(req.originalUrl);
    return body === undefined ? notFound(res) : sendJson(res, 200, body);
  };
  app.get('/meshes/:mesh/dataplanes', fromCapture);
  app.get('/meshes/:mesh/dataplanes/:name', fromCapture);
  app.get('/mesh-insights/:name', fromCapture);
  app.get('/meshes/:mesh/service-insights', fromCapture);
  app.get('/meshes/:mesh/dataplanes\\+insights', fromCapture); // `+` is reserved in Express 5 paths
  app.get('/global-insight', fromCapture);
  app.get('/meshes/:mesh/dataplanes/:name/policies', fromCapture);
  app.put('/meshes/:mesh/dataplanes/:name', (req, res) => put(req.params.name, res));
  server = createServer(app);
} else {
  console.error(`unknown baseline "${flavour}": expected node or express`);
  process.exit(2);
}

server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
