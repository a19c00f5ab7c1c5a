import type { Server } from 'node:http';
import { ConfigError } from './config.js';

/** A port that cannot be listened on, as an error naming the setting that chose it; other errors as they are. */
export function listenError(error: NodeJS.ErrnoException, setting: string, port: number, host?: string): Error {
  const where = host === undefined ? `port ${port}` : `port ${port} on ${host}`;
  if (error.code === 'EADDRINUSE') return new ConfigError(`${where} is already in use`, setting);
  if (error.code === 'EACCES') return new ConfigError(`no permission to listen on ${where}`, setting);
  return error;
}

/** Listens on the port of `setting`, turning a taken port into a clear startup error instead of a hang. */
export function listen(server: Server, port: number, host: string, setting: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(listenError(error, setting, port, host));
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
