import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RefreshQueue } from './refresh-queue.js';

// The queue's time is the test's fake clock, so what it asserts holds however busy the machine is.
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const elapse = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('the refresh queue', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs each task once, in turn, and counts as busy until a while after the last', async () => {
    const queue = new RefreshQueue(5000);
    expect(queue.idle).toBe(true);
    const ran: string[] = [];
    const task = (name: string) => async () => {
      await sleep(5);
      ran.push(name);
    };
    const b = task('b');
    queue.enqueue(task('a'));
    queue.enqueue(b);
    // Still waiting its turn: not queued twice.
    queue.enqueue(b);
    expect(queue.idle).toBe(false);
    let idleAt: number | undefined;
    const idle = queue.whenIdle().then(() => (idleAt = performance.now()));
    await elapse(30);
    expect(ran).toEqual(['a', 'b']);
    // Done, but the responses it wrote are still on their way: deferred work waits.
    const doneAt = performance.now();
    expect(queue.idle).toBe(false);
    expect(idleAt).toBeUndefined();
    await elapse(300);
    await idle;
    expect(idleAt! - doneAt).toBeGreaterThan(150);
    expect(queue.idle).toBe(true);
    await expect(queue.whenIdle()).resolves.toBeUndefined();
  });

  it('keeps deferred work waiting while new tasks arrive', async () => {
    const queue = new RefreshQueue(5000);
    queue.enqueue(() => sleep(5));
    let released = false;
    void queue.whenIdle().then(() => (released = true));
    for (let round = 0; round < 4; round++) {
      await elapse(100);
      queue.enqueue(() => sleep(5));
    }
    expect(released).toBe(false);
    await elapse(400);
    expect(released).toBe(true);
  });

  it('lets deferred work go after the longest deferral when tasks never stop arriving', async () => {
    const queue = new RefreshQueue(300);
    queue.enqueue(() => sleep(5));
    const started = performance.now();
    let releasedAt: number | undefined;
    void queue.whenIdle().then(() => (releasedAt = performance.now()));
    for (let round = 0; round < 8; round++) {
      await elapse(100);
      queue.enqueue(() => sleep(5));
    }
    expect(queue.idle).toBe(false);
    expect(releasedAt).toBeDefined();
    expect(releasedAt! - started).toBeGreaterThanOrEqual(290);
    // Work deferred later waits its own longest deferral, and nothing waits once the queue is idle.
    const later = queue.whenIdle();
    await elapse(400);
    await later;
    await elapse(300);
    expect(queue.idle).toBe(true);
    await expect(queue.whenIdle()).resolves.toBeUndefined();
  });

  it('lets work past its longest deferral go once the run in progress ends, not in the middle of it', async () => {
    const queue = new RefreshQueue(100);
    let ranUntil: number | undefined;
    queue.enqueue(async () => {
      await sleep(500);
      ranUntil = performance.now();
    });
    let releasedAt: number | undefined;
    void queue.whenIdle().then(() => (releasedAt = performance.now()));
    await elapse(300);
    expect(releasedAt).toBeUndefined();
    await elapse(400);
    expect(ranUntil).toBeDefined();
    expect(releasedAt).toBeGreaterThanOrEqual(ranUntil!);
    // Released as the run ended, not once the queue settled (250 ms later).
    expect(releasedAt! - ranUntil!).toBeLessThan(200);
  });

  it('calls back after the run in progress, at the turn after it, or at once when none runs', async () => {
    const queue = new RefreshQueue(1000);
    const order: string[] = [];
    queue.afterRun(() => order.push('no run'));
    expect(order).toEqual(['no run']);
    queue.enqueue(() => sleep(60));
    queue.enqueue(() => {
      order.push('last task');
      setImmediate(() => order.push('last responses sent'));
      return Promise.resolve();
    });
    queue.afterRun(() => order.push('after the run'));
    expect(queue.running).toBe(true);
    await elapse(150);
    expect(queue.running).toBe(false);
    expect(order).toEqual(['no run', 'last task', 'last responses sent', 'after the run']);
  });

  it('lets work past its longest deferral go after what the run left for the next turn of the event loop (its last responses)', async () => {
    const queue = new RefreshQueue(50);
    const order: string[] = [];
    queue.enqueue(() => sleep(150));
    // The run's last task, within its last slice: what it writes leaves at the next turn.
    queue.enqueue(() => {
      setImmediate(() => order.push('last responses sent'));
      return Promise.resolve();
    });
    void queue.whenIdle().then(() => order.push('deferred work'));
    await elapse(300);
    expect(order).toEqual(['last responses sent', 'deferred work']);
  });
});
