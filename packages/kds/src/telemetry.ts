// What zone sync reports: log lines and counters, through interfaces the control plane implements
// (pino and prom-client there), so this package depends on neither.

export interface SyncLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** Counters of sync (the control plane exposes them under the reference's `kds_*` names). */
export interface SyncMetrics {
  /** A message went out: one response per kind in it. */
  responsesSent(kinds: readonly string[]): void;
  /** The peer acknowledged (or rejected) responses of these kinds. */
  confirmations(kinds: readonly string[], accepted: boolean): void;
  /** A received message was applied (or refused) in this many seconds. */
  applied(seconds: number): void;
  /** A session opened (+1) or closed (-1). */
  streams(delta: number): void;
}
