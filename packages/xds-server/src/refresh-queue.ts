// Proxies' recomputations run one after another, yielding to I/O every slice of time: after a
// change that reaches thousands of proxies, the responses already computed leave while the rest
// are computed, instead of all waiting for the last one (docs/xds.md, Pushing changes).

/**
 * Work between two yields to I/O. A yield writes the responses computed so far and reads the ACKs
 * that came meanwhile: longer slices do it for more proxies at once, at less cost per proxy, so a
 * mesh-wide push reaches its last proxy sooner with 50 ms than with 10 ms; the API waits at most a
 * slice (docs/xds.md, Pushing changes).
 */
const SLICE_MS = 50;

/**
 * How long the queue still counts as busy after its last recomputation: the responses it wrote are
 * being delivered and acknowledged, and work that can wait (token checks, insight writes) lets them.
 */
const SETTLE_MS = 250;

export class RefreshQueue {
  private readonly tasks = new Set<() => Promise<void>>();
  private inRun = false;
  private ranUntil = -Infinity;
  private settleTimer: NodeJS.Timeout | undefined;
  private readonly idleWaiters = new Set<() => void>();
  /** Waiters whose longest deferral passed during a run: they go after it, never in the middle of a push. */
  private readonly overdueWaiters = new Set<() => void>();
  /** Called once the run in progress has ended. */
  private afterRunListeners: Array<() => void> = [];

  /**
   * `deferAtMostMs`: the longest that `whenIdle` waits. A push of thousands of proxies settles
   * sooner, while a steady flow of changes may never leave the queue idle, and the work that waits
   * must still be done.
   */
  constructor(private readonly deferAtMostMs: number) {}

  /** Nothing waiting, running or just done: work that can wait (insight writes) goes now. */
  get idle(): boolean {
    return !this.inRun && performance.now() - this.ranUntil >= SETTLE_MS;
  }

  /**
   * Resolves once the queue is idle (at once when it is), or after the longest deferral when it
   * does not get there: then between two runs, once the one in progress has ended.
   */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => {
      const release = () => {
        clearTimeout(deadline);
        this.idleWaiters.delete(release);
        this.overdueWaiters.delete(release);
        resolve();
      };
      const deadline = setTimeout(() => (this.inRun ? this.overdueWaiters.add(release) : release()), this.deferAtMostMs);
      deadline.unref();
      this.idleWaiters.add(release);
      if (!this.inRun) this.releaseWhenSettled();
    });
  }

  /** Whether recomputations are being run now (a push in progress). */
  get running(): boolean {
    return this.inRun;
  }

  /**
   * Calls `listener` once the run in progress has ended, at the next turn of the event loop (after
   * the run's last responses have left); at once when none is running.
   */
  afterRun(listener: () => void): void {
    if (!this.inRun) return listener();
    this.afterRunListeners.push(listener);
  }

  /** Runs `task` after those queued before it; a task already waiting is not queued twice. */
  enqueue(task: () => Promise<void>): void {
    this.tasks.add(task);
    if (!this.inRun) void this.run();
  }

  private async run(): Promise<void> {
    this.inRun = true;
    let sliceStart = performance.now();
    try {
      // A set visits what is added while it is iterated: tasks queued meanwhile run in this loop too.
      for (const task of this.tasks) {
        this.tasks.delete(task);
        await task();
        if (performance.now() - sliceStart >= SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
      }
    } finally {
      this.inRun = false;
      this.ranUntil = performance.now();
      if (this.overdueWaiters.size > 0 || this.afterRunListeners.length > 0) {
        const listeners = this.afterRunListeners;
        this.afterRunListeners = [];
        // At the next turn of the event loop: the responses of the run's last proxies leave first.
        setImmediate(() => this.afterRunTurn(listeners));
      }
      if (this.idleWaiters.size > 0) this.releaseWhenSettled();
    }
  }

  /**
   * The turn after a run: its listeners are called, and the waiters past their longest deferral
   * released unless another run began meanwhile (it releases them when done).
   */
  private afterRunTurn(listeners: ReadonlyArray<() => void>): void {
    for (const listener of listeners) listener();
    if (this.inRun) return;
    for (const release of [...this.overdueWaiters]) release();
  }

  /** Resolves the waiters once the queue has settled, unless another run began meanwhile (it releases them when done). */
  private releaseWhenSettled(): void {
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      if (this.inRun) return;
      if (!this.idle) return this.releaseWhenSettled();
      for (const release of [...this.idleWaiters]) release();
    }, Math.max(0, this.ranUntil + SETTLE_MS - performance.now()));
    this.settleTimer.unref();
  }
}
