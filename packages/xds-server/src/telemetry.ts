// What the data plane server reports to the control plane's metrics (docs/xds.md, Metrics).
import type { ProxyType } from './proxy-node.js';

/** How a recomputation of a proxy's configuration ended: new for the stream, changed, or the same as before. */
export type GenerationResult = 'generated' | 'changed' | 'skip';

export interface XdsMetrics {
  /** A proxy's configuration was computed in this many milliseconds. */
  generation(proxyType: ProxyType, result: GenerationResult, milliseconds: number): void;
  /** Computing a proxy's configuration failed. */
  generationError(): void;
  /** A discovery response of this type went out. */
  responseSent(typeUrl: string): void;
  /** A proxy acknowledged (or rejected) a response of this type. */
  confirmation(typeUrl: string, accepted: boolean): void;
  /** From a response going out to the proxy's ACK or NACK of it, in milliseconds. */
  delivery(milliseconds: number): void;
  /** A stream opened (+1) or closed (-1). */
  streams(delta: number): void;
}
