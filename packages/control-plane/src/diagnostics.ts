// The diagnostics server: readiness, liveness and Prometheus metrics of the process.
import express, { type Express } from 'express';
import type { Registry } from 'prom-client';

export function createDiagnosticsApp(isReady: () => boolean, registry: Registry): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthy', (_req, res) => {
    res.type('text/plain').send('OK');
  });
  app.get('/ready', (_req, res) => {
    const ready = isReady();
    res.status(ready ? 200 : 503).type('text/plain').send(ready ? 'OK' : 'not ready');
  });
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  return app;
}
