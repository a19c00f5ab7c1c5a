// Standard output and error of a binary, whose readers may go away.

/**
 * A reader of standard output or error that goes away leaves the process running without them.
 * A control plane in a worker thread (launch.ts) writes through the main thread's streams, so both
 * threads call this.
 */
export function outliveOutputReaders(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
}
