#!/usr/bin/env node
// The write baseline of bench/api.bench.mjs: a bare Express 5 app whose
// `PUT /meshes/:mesh/dataplanes/:name` parses the JSON body (express.json, with the control
// plane's body limit) and stores it in a SQLite file, one transaction per request, answering 201
// for a new name and 200 for a known one with `{}`, as the control plane does. No validation,
// no access check, no change log, no events: what a write costs with the same framework, JSON
// parser and database and nothing else.
//
// The database is set up as the control plane's store sets up its own (packages/store-sqlite):
// journal_mode=WAL and synchronous=NORMAL, one file on disk.
//
// Usage: node bench/write-baseline-server.mjs <database file>
// Prints `listening <port>` on stdout once it accepts connections.
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The better-sqlite3 build the control plane's store runs on.
const Database = createRequire(join(root, 'packages', 'store-sqlite', 'package.json'))('better-sqlite3');
const { default: express } = await import('express');

/** The control plane's default `apiServer.maxRequestBodySize` (packages/http-api, limits.ts). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

const [databaseFile] = process.argv.slice(2);
if (!databaseFile) {
  console.error('usage: node bench/write-baseline-server.mjs <database file>');
  process.exit(2);
}
const db = new Database(databaseFile);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS dataplanes (mesh TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (mesh, name))');
const upsert = db.prepare(
  'INSERT INTO dataplanes (mesh, name, spec, version) VALUES (?, ?, ?, 1) ON CONFLICT (mesh, name) DO UPDATE SET spec = excluded.spec, version = version + 1 RETURNING version',
);
/** Stores one body in its own transaction; whether it created the row. */
const store = db.transaction((mesh, name, spec) => upsert.get(mesh, name, spec).version === 1);

const app = express();
// As the control plane: no ETag hashing of bodies, no X-Powered-By.
app.disable('x-powered-by');
app.set('etag', false);
app.put('/meshes/:mesh/dataplanes/:name', express.json({ limit: MAX_BODY_BYTES }), (req, res) => {
  const created = store(req.params.mesh, req.params.name, JSON.stringify(req.body));
  // As the control plane's `sendJson`: a status, `Content-Type: application/json`, the bytes.
  res.statusCode = created ? 201 : 200;
  res.setHeader('Content-Type', 'application/json');
  res.end('{}');
});

const server = createServer(app);
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => {
  db.close();
  process.exit(0);
});
