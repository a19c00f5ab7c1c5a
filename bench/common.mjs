// What every benchmark needs: free loopback ports, child processes that die with the benchmark,
// and quantiles of measured times.
import { createServer } from 'node:net';

/** A port free on the loopback address at the time of asking. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Child processes to kill when the benchmark exits, however it ends. */
export const children = new Set();
process.on('exit', () => children.forEach((child) => child.exitCode === null && child.kill('SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The q-quantile (0 to 1) of values sorted in ascending order. */
export const quantile = (sorted, q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
