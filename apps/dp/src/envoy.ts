// Envoy as a child process: found on PATH or at `--binary-path`, its version read from
// `envoy --version`, started on the bootstrap file, stopped by the signals the runner receives.
// Its log (stderr) comes through the runner, which reads it (envoy-log.ts).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { request } from 'node:http';

/** The binary to run: the given path, else `envoy` on PATH. */
export function findEnvoy(binaryPath: string): string {
  const isExecutable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (binaryPath) {
    if (!isExecutable(binaryPath)) throw new Error(`could not find binary: ${binaryPath} is not an executable file`);
    return binaryPath;
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'envoy');
    if (dir && isExecutable(candidate)) return candidate;
  }
  throw new Error('could not find binary "envoy" on PATH: install Envoy or pass --binary-path');
}

export interface EnvoyVersion {
  version: string;
  build: string;
}

/** `envoy --version` prints `envoy  version: <revision>/<version>/<status>/<build type>/<ssl>`. */
export function envoyVersion(binary: string): Promise<EnvoyVersion> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['--version'], { timeout: 30_000 }, (error, stdout) => {
      if (error) {
        reject(new Error(`failed to execute ${binary} with arguments "--version": ${error.message}`));
        return;
      }
      const build = /version:\s*(\S+)/.exec(stdout)?.[1] ?? '';
      const parts = build.split('/');
      if (parts.length !== 5) {
        reject(new Error(`wrong Envoy build format: ${build}`));
        return;
      }
      resolve({ version: parts[1] ?? '', build });
    });
  });
}

export interface EnvoyOptions {
  binary: string;
  configPath: string;
  drainTimeSeconds: number;
  logLevel: string;
  componentLogLevel: string;
  concurrency: number;
}

export function startEnvoy(options: EnvoyOptions): ChildProcess {
  const args = ['--config-path', options.configPath, '--drain-time-s', String(options.drainTimeSeconds), '--disable-hot-restart', '--log-level', options.logLevel];
  if (options.componentLogLevel) args.push('--component-log-level', options.componentLogLevel);
  if (options.concurrency > 0) args.push('--concurrency', String(options.concurrency));
  return spawn(options.binary, args, { stdio: ['ignore', 'inherit', 'pipe'] });
}

/** Asks Envoy to fail its health checks, so callers move away before it stops (the drain). */
export function failHealthChecks(adminPort: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: adminPort, path: '/healthcheck/fail', method: 'POST', timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', () => resolve());
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
