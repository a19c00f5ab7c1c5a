// Mesh and service insights on the wire, as their GETs (views/insights.ts) and the change stream
// (events/) send them.
import type { MeshInsight, ServiceInsight } from '@mesh/insights';
import { meshInsightKind, serviceInsightKind } from '@mesh/model';

/**
 * The aggregator hands out the same insight object while it is unchanged, so each one is encoded
 * once: polling unchanged insights costs what sending them costs.
 */
const bytesOf = new WeakMap<MeshInsight | ServiceInsight, Buffer>();

function encoded<T extends MeshInsight | ServiceInsight>(insight: T, json: (insight: T) => string): Buffer {
  let bytes = bytesOf.get(insight);
  if (bytes === undefined) bytesOf.set(insight, (bytes = Buffer.from(json(insight))));
  return bytes;
}

const meshInsightJson = (insight: MeshInsight): string =>
  JSON.stringify({
    type: meshInsightKind.name,
    name: insight.mesh,
    creationTime: insight.creationTime,
    modificationTime: insight.modificationTime,
    lastSync: insight.modificationTime,
    ...insight.spec,
  });

const serviceInsightJson = (insight: ServiceInsight): string =>
  JSON.stringify({
    type: serviceInsightKind.name,
    mesh: insight.mesh,
    name: insight.name,
    creationTime: insight.creationTime,
    modificationTime: insight.modificationTime,
    ...insight.stat,
  });

export const meshInsightBytes = (insight: MeshInsight): Buffer => encoded(insight, meshInsightJson);

export const serviceInsightBytes = (insight: ServiceInsight): Buffer => encoded(insight, serviceInsightJson);
