// One event of the change stream (docs/api.md, Change stream) and its lines on the wire.
import type { InsightChange, MeshInsight, ServiceInsight } from '@mesh/insights';
import { meshInsightKind, serviceInsightKind, type AnyKind } from '@mesh/model';
import type { StoredResource } from '@mesh/store';
import { meshInsightBytes, serviceInsightBytes } from '../insight-json.js';
import { resourceJson } from '../resource-json.js';

/** A resource or insight put or deleted at a revision, encoded once for every stream that sends it. */
export class ChangeEvent {
  private frames: { plain: string; withId: string } | undefined;

  constructor(
    readonly revision: number,
    readonly kind: AnyKind,
    readonly mesh: string,
    readonly name: string,
    /** What GET of it answered at this revision; absent for a delete. */
    private readonly resource: StoredResource | MeshInsight | ServiceInsight | undefined,
  ) {}

  get operation(): 'put' | 'delete' {
    return this.resource ? 'put' : 'delete';
  }

  /** The event's lines, with `id:` for the last event of its revision a stream sends. */
  frame(withId: boolean): string {
    if (!this.frames) {
      const mesh = this.kind.scope === 'mesh' ? `,"mesh":${JSON.stringify(this.mesh)}` : '';
      const resource = this.resource ? `,"resource":${this.resourceJson()}` : '';
      const lines = `event: ${this.operation}\ndata: {"revision":${this.revision},"type":${JSON.stringify(this.kind.name)}${mesh},"name":${JSON.stringify(this.name)}${resource}}\n\n`;
      this.frames = { plain: lines, withId: `id: ${this.revision}\n${lines}` };
    }
    return withId ? this.frames.withId : this.frames.plain;
  }

  private resourceJson(): string {
    if (this.kind === meshInsightKind) return meshInsightBytes(this.resource as MeshInsight).toString();
    if (this.kind === serviceInsightKind) return serviceInsightBytes(this.resource as ServiceInsight).toString();
    return resourceJson(this.kind, this.resource as StoredResource);
  }
}

/** The events of one revision: the store's change, then the insights it altered. */
export interface ChangeGroup {
  revision: number;
  events: readonly ChangeEvent[];
  /** What each filter of the streams sends of it, by the filter's key. */
  encoded?: Map<string, Buffer>;
}

export function insightEvent(revision: number, altered: InsightChange): ChangeEvent {
  return altered.type === 'MeshInsight'
    ? new ChangeEvent(revision, meshInsightKind, '', altered.name, altered.insight)
    : new ChangeEvent(revision, serviceInsightKind, altered.mesh, altered.name, altered.insight);
}
