// The control plane's Prometheus metrics (prom-client), under the reference's names where it has
// them: API requests by route template, store operations by operation and kind, resources by kind
// and mesh, proxies and zones by status.
import type { InsightAggregator } from '@mesh/insights';
import type { RequestObserver } from '@mesh/http-api';
import { KINDS, meshKind } from '@mesh/model';
import { collectDefaultMetrics, Gauge, type Metric, Registry } from 'prom-client';
import { LabelledHistogram } from './labelled-histogram.js';
import type { MeteredResourceStore } from './metered-store.js';

export interface ControlPlaneMetrics {
  registry: Registry;
  observeRequest: RequestObserver;
}

export function createMetrics(store: MeteredResourceStore, insights: InsightAggregator): ControlPlaneMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const metric of store.metrics) registry.registerMetric(metric);

  // Every API request is observed, a kept answer's too, so an observation must cost little beside it (labelled-histogram.ts).
  const requests = new LabelledHistogram<'handler' | 'method' | 'code'>(
    'api_server_http_request_duration_seconds',
    'REST API requests by route template, method and status code',
    ['handler', 'method', 'code'],
    [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
  );
  registry.registerMetric(requests as unknown as Metric);

  new Gauge({
    name: 'resources_count',
    help: 'Stored resources by kind and mesh',
    labelNames: ['resource_type', 'mesh'],
    registers: [registry],
    async collect() {
      this.reset();
      const meshes = (await store.list({ type: meshKind.name, offset: 0, size: 0 })).items.map((mesh) => mesh.name);
      for (const kind of KINDS.filter((k) => !k.computed)) {
        if (kind.scope === 'global') this.set({ resource_type: kind.name, mesh: '' }, await store.count(kind.name));
        else for (const mesh of meshes) this.set({ resource_type: kind.name, mesh }, await store.count(kind.name, mesh));
      }
    },
  });

  new Gauge({
    name: 'dataplanes',
    help: 'Data plane proxies by status (online: connected to a control plane)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      await insights.settled();
      const { dataplanes } = await insights.globalInsight();
      const counts = { online: 0, offline: 0 };
      for (const byType of Object.values(dataplanes)) {
        counts.online += byType.online;
        counts.offline += byType.offline;
      }
      this.set({ status: 'online' }, counts.online);
      this.set({ status: 'offline' }, counts.offline);
    },
  });

  new Gauge({
    name: 'zones',
    help: 'Zone control planes by status (online: connected to this global)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      await insights.settled();
      const { controlPlanes } = (await insights.globalInsight()).zones;
      this.set({ status: 'online' }, controlPlanes.online);
      this.set({ status: 'offline' }, controlPlanes.total - controlPlanes.online);
    },
  });

  return {
    registry,
    observeRequest: ({ route, method, status, seconds }) => requests.observe([route, method, status], seconds),
  };
}
