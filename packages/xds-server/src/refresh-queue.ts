// Proxies' recomputations run one after another, yielding to I/O every few milliseconds: after a
// change that reaches thousands of proxies, the responses already computed leave while the rest
// are computed, instead of all waiting for the last one (docs/xds.md, Pushing changes).
import { performance } from 'node:perf_hooks';

/** Work between two yields to I/O. */
const SLICE_MS = 10;

export class RefreshQueue {
  private readonly tasks = new Set<() => Promise<void>>();
  private running = false;
  private readonly idleWaiters: Array<() => void> = [];

  /** Nothing waiting or running: work that can wait (insight writes) goes now. */
  get idle(): boolean {
    return !this.running;
  }

  /** Resolves once nothing is waiting or running: at once when idle. */
  whenIdle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Runs `task` after those queued before it; a task already waiting is not queued twice. */
  enqueue(task: () => Promise<void>): void {
    this.tasks.add(task);
    if (!this.running) void this.run();
  }

  private async run(): Promise<void> {
    this.running = true;
    let sliceStart = performance.now();
    try {
      while (this.tasks.size > 0) {
        const task = this.tasks.values().next().value as () => Promise<void>;
        this.tasks.delete(task);
        await task();
        if (performance.now() - sliceStart >= SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
      }
    } finally {
      this.running = false;
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }
}
