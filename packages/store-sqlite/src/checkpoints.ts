// Checkpoints of the write-ahead log on a thread of their own. SQLite copies the log back into the
// database file from the connection whose commit makes the log reach its limit (1,000 pages by
// default): that request then waits for the copy, and under a stream of writes that was half of
// every write's time. A worker thread with its own connection copies the log every
// CHECKPOINT_INTERVAL_MS instead; the writing connection keeps a limit ten times as high, reached
// only if this thread could not keep up (docs/architecture.md, Store: one engine, two drivers).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const CHECKPOINT_INTERVAL_MS = 100;

/** The writing connection's own limit, in pages: a bound on the log should the checkpoints stop. */
export const WRITER_CHECKPOINT_PAGES = 10_000;

/**
 * The worker's whole program. A PASSIVE checkpoint copies what it can without waiting for the
 * writer or holding it up; SQLite restarts the log at the first write after one that copied it all.
 */
const CHECKPOINTER = `
const { parentPort, workerData } = require('node:worker_threads');
// Its name in \`top -H\` (docs/architecture.md, Threads); Linux only.
try { require('node:fs').writeFileSync('/proc/thread-self/comm', 'wal-checkpoint'); } catch {}
const Database = require(workerData.library);
const db = new Database(workerData.path, { fileMustExist: true });
const timer = setInterval(() => db.pragma('wal_checkpoint(PASSIVE)'), workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

export class BackgroundCheckpoints {
  private worker: Worker | undefined;
  private exited: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly path: string) {}

  /** Starts the thread at the first write: a store that is only read never needs it. */
  written(): void {
    if (this.worker || this.stopped) return;
    const worker = new Worker(CHECKPOINTER, { eval: true, workerData: { library: BETTER_SQLITE3, path: this.path, intervalMs: CHECKPOINT_INTERVAL_MS } });
    this.exited = new Promise((resolve) => worker.once('exit', resolve));
    // A thread that failed (its file gone, say) has ended; the writer's own limit bounds the log from then on.
    worker.on('error', () => undefined);
    // The thread never keeps a process alive that has nothing else to do.
    worker.unref();
    this.worker = worker;
  }

  /** Ends the thread and closes its connection, so that the writer's close is the last one and removes the log. */
  async stop(): Promise<void> {
    this.stopped = true;
    // Waited for: the thread holds the process until it has closed its connection.
    this.worker?.ref();
    this.worker?.postMessage('stop');
    await this.exited;
  }
}
