// Server certificates: the configured ones, or a self-signed one generated at first start into
// the work directory and reused afterwards.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { ConfigError, type ControlPlaneConfig } from './config.js';

export interface TlsMaterial {
  cert: string;
  key: string;
  /** Where it came from, for the startup log. */
  source: string;
}

function localAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((i): i is NonNullable<typeof i> => i !== undefined)
    .map((i) => i.address);
}

async function generateSelfSigned(): Promise<{ cert: string; key: string }> {
  const notAfter = new Date();
  notAfter.setFullYear(notAfter.getFullYear() + 10);
  const pems = await generate([{ name: 'commonName', value: hostname() }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2 as const, value: hostname() },
          { type: 2 as const, value: 'localhost' },
          ...localAddresses().map((ip) => ({ type: 7 as const, ip })),
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** The certificate files a server is configured with, and the key that names them in errors. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
  setting: string;
}

/**
 * A server's certificate: its own files, else `general.tlsCertFile`/`tlsKeyFile`, else the
 * self-signed certificate generated into the work directory, shared by every server of the process.
 */
export async function loadTlsMaterial(config: ControlPlaneConfig, files?: TlsFiles): Promise<TlsMaterial> {
  const https = config.apiServer.https;
  const own = files ?? { certFile: https.tlsCertFile, keyFile: https.tlsKeyFile, setting: 'apiServer.https' };
  const certFile = own.certFile || config.general.tlsCertFile;
  const keyFile = own.keyFile || config.general.tlsKeyFile;
  if (certFile || keyFile) {
    if (!certFile || !keyFile) throw new ConfigError('tlsCertFile and tlsKeyFile must be set together', `${own.setting}.${certFile ? 'tlsKeyFile' : 'tlsCertFile'}`);
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), source: certFile };
  }
  const certPath = join(config.general.workDir, 'mesh-cp.crt');
  const keyPath = join(config.general.workDir, 'mesh-cp.key');
  if (existsSync(certPath) && existsSync(keyPath)) {
    return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8'), source: certPath };
  }
  const generated = await generateSelfSigned();
  mkdirSync(config.general.workDir, { recursive: true });
  writeFileSync(keyPath, generated.key, { mode: 0o600 });
  writeFileSync(certPath, generated.cert);
  return { ...generated, source: `${certPath} (generated)` };
}

/**
 * The certificates a client may present on the HTTPS port: every `.pem`/`.crt` file of
 * `apiServer.auth.clientCertsDir`, and `apiServer.https.tlsCaFile`. A client whose certificate
 * they verify is an admin (docs/tokens.md).
 */
export function loadClientCertAuthorities(config: ControlPlaneConfig): string[] {
  const authorities: string[] = [];
  const dir = config.apiServer.auth.clientCertsDir;
  if (dir) {
    for (const file of readdirSync(dir).sort()) {
      if (/\.(pem|crt)$/.test(file)) authorities.push(readFileSync(join(dir, file), 'utf8'));
    }
  }
  if (config.apiServer.https.tlsCaFile) authorities.push(readFileSync(config.apiServer.https.tlsCaFile, 'utf8'));
  return authorities;
}
