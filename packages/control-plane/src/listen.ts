import type { Server } from 'node:http';

/** Listens, turning a taken port into a clear startup error instead of a hang. */
export function listen(server: Server, port: number, host: string, what: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE') reject(new Error(`${what}: port ${port} on ${host} is already in use`));
      else if (error.code === 'EACCES') reject(new Error(`${what}: no permission to listen on port ${port}`));
      else reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      const address = server.address();
      resolvePort(typeof address === 'object' && address ? address.port : port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/** Stops accepting, lets requests in flight finish, then cuts what is left after `timeoutMs`. */
export function closeGracefully(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((done) => {
    if (!server.listening) {
      done();
      return;
    }
    const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      done();
    });
    server.closeIdleConnections();
  });
}
