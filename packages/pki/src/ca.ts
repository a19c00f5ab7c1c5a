// Certificate authorities of a mesh's mTLS backends: `builtin` (generated and kept as secrets of
// the mesh) and `provided` (the operator's CA, read from a data source).
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fieldPath, indexPath, invalidResource, isDomainName, secretKind, type Violation } from '@mesh/model';
import type { ManagerContext, Spec } from '@mesh/resource-manager';
import type { NewResource, ResourceReader } from '@mesh/store';
import * as x509 from '@peculiar/x509';
import { generate } from 'selfsigned';

export interface MtlsBackend {
  name?: string;
  type?: string;
  conf?: Record<string, unknown>;
}

export interface MeshMtls {
  enabledBackend?: string;
  backends?: MtlsBackend[];
  skipValidation?: boolean;
}

export const mtlsOf = (spec: Spec): MeshMtls => (spec.mtls as MeshMtls | undefined) ?? {};

/** The secrets of the mesh that hold a builtin backend's CA (the reference's names). */
export const builtinCaSecretNames = (mesh: string, backend: string) => ({
  cert: `${mesh}.ca-builtin-cert-${backend}`,
  key: `${mesh}.ca-builtin-key-${backend}`,
});

export type DataSource = { secret?: string; file?: string; inline?: string; inlineString?: string };

const SOURCES_HINT = 'data source has to be chosen. Available sources: secret, file, inline';
const MAX_BACKEND_NAME = 255;

function checkDataSource(path: string, source: DataSource, out: Violation[]): void {
  if (source.secret !== undefined) {
    if (source.secret === '') out.push({ field: `${path}.secret`, message: 'cannot be empty' });
  } else if (source.inline !== undefined) {
    if (source.inline === '') out.push({ field: `${path}.inline`, message: 'cannot be empty' });
  } else if (source.file !== undefined) {
    if (source.file === '') out.push({ field: `${path}.file`, message: 'cannot be empty' });
  } else if (source.inlineString === undefined) {
    out.push({ field: path, message: SOURCES_HINT });
  }
}

export async function loadDataSource(ctx: { store: ResourceReader }, mesh: string, source: DataSource): Promise<string> {
  if (source.secret !== undefined) {
    const secret = await ctx.store.get({ type: secretKind.name, mesh, name: source.secret });
    if (!secret) throw new Error(`could not load data: Resource not found: type="Secret" name="${source.secret}" mesh="${mesh}"`);
    const data = (JSON.parse(secret.spec) as { data?: string }).data ?? '';
    return Buffer.from(data, 'base64').toString('utf8');
  }
  if (source.file !== undefined) {
    try {
      return await readFile(source.file, 'utf8');
    } catch (error) {
      throw new Error(`could not load data: ${(error as Error).message}`, { cause: error });
    }
  }
  if (source.inline !== undefined) return Buffer.from(source.inline, 'base64').toString('utf8');
  return source.inlineString ?? '';
}

/** The X509-SVID requirements on a CA certificate. */
function checkCaCertificate(path: string, certPem: string, out: Violation[]): void {
  const cert = new x509.X509Certificate(certPem);
  const constraints = cert.getExtension(x509.BasicConstraintsExtension);
  const usages = cert.getExtension(x509.KeyUsagesExtension)?.usages ?? 0;
  if (!constraints?.ca) out.push({ field: path, message: "basic constraint 'CA' must be set to 'true' (see X509-SVID: 4.1. Basic Constraints)" });
  if (!(usages & x509.KeyUsageFlags.keyCertSign)) {
    out.push({ field: path, message: "key usage extension 'keyCertSign' must be set (see X509-SVID: 4.3. Key Usage)" });
  }
  if (usages & x509.KeyUsageFlags.keyAgreement) {
    out.push({ field: path, message: "key usage extension 'keyAgreement' must NOT be set (see X509-SVID: Appendix A. X.509 Field Reference)" });
  }
}

function keyPairProblem(certPem: string, keyPem: string): string | undefined {
  try {
    const cert = new X509Certificate(certPem);
    return cert.checkPrivateKey(createPrivateKey(keyPem)) ? undefined : 'private key does not match public key';
  } catch (error) {
    return (error as Error).message;
  }
}

async function checkProvided(ctx: ManagerContext, mesh: string, path: string, conf: Record<string, unknown>, out: Violation[]): Promise<void> {
  const found: Violation[] = [];
  const cert = conf.cert as DataSource | undefined;
  const key = conf.key as DataSource | undefined;
  if (cert === undefined) found.push({ field: `${path}.cert`, message: 'has to be defined' });
  else checkDataSource(`${path}.cert`, cert, found);
  if (key === undefined) found.push({ field: `${path}.key`, message: 'has to be defined' });
  else checkDataSource(`${path}.key`, key, found);
  if (found.length > 0 || !cert || !key) {
    out.push(...found);
    return;
  }
  let certPem: string;
  let keyPem: string;
  try {
    keyPem = await loadDataSource(ctx, mesh, key);
    certPem = await loadDataSource(ctx, mesh, cert);
  } catch (error) {
    const message = (error as Error).message;
    out.push({ field: `${path}.cert`, message }, { field: `${path}.key`, message });
    return;
  }
  const problem = keyPairProblem(certPem, keyPem);
  if (problem) out.push({ field: `${path}.cert`, message: `not a valid TLS key pair: ${problem}` });
  else checkCaCertificate(`${path}.cert[0]`, certPem, out);
}

/** The checks a mesh's mTLS backends must pass before the mesh is stored. */
export async function validateMtlsBackends(ctx: ManagerContext, mesh: string, mtls: MeshMtls): Promise<Violation[]> {
  const out: Violation[] = [];
  for (const [i, backend] of (mtls.backends ?? []).entries()) {
    const path = indexPath('mtls.backends', i);
    if (backend.type !== 'builtin' && backend.type !== 'provided') {
      out.push({ field: fieldPath(path, 'type'), message: 'could not find installed plugin for this type' });
      continue;
    }
    if (mtls.skipValidation) continue;
    if (backend.type === 'builtin') {
      const secretName = builtinCaSecretNames(mesh, backend.name ?? '').cert;
      const field = fieldPath(path, 'conf.mtls.backends.name');
      if (secretName.length > MAX_BACKEND_NAME) out.push({ field, message: `Backend name is too long. Max length: ${MAX_BACKEND_NAME}` });
      else if (!isDomainName(secretName)) out.push({ field, message: `"${backend.name ?? ''}" name must be valid dns name` });
    } else {
      await checkProvided(ctx, mesh, fieldPath(path, 'conf'), backend.conf ?? {}, out);
    }
  }
  return out;
}

/** Refuses swapping the CA of a mesh whose mTLS stays enabled. */
export function checkCaChange(current: MeshMtls, next: MeshMtls): void {
  if (current.enabledBackend && next.enabledBackend && current.enabledBackend !== next.enabledBackend) {
    throw invalidResource([{ field: 'mtls.enabledBackend', message: 'Changing CA when mTLS is enabled is forbidden. Disable mTLS first and then change the CA' }]);
  }
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** Generates a CA for each builtin backend that has none yet, as secrets of the mesh. */
export async function builtinCaSecrets(ctx: ManagerContext, mesh: string, mtls: MeshMtls): Promise<NewResource[]> {
  const secrets: NewResource[] = [];
  for (const backend of mtls.backends ?? []) {
    if (backend.type !== 'builtin' || !backend.name) continue;
    const names = builtinCaSecretNames(mesh, backend.name);
    if (await ctx.store.get({ type: secretKind.name, mesh, name: names.cert })) continue;
    const notAfter = new Date();
    notAfter.setFullYear(notAfter.getFullYear() + 10);
    const ca = await generate([{ name: 'organizationName', value: mesh }, { name: 'commonName', value: `${mesh} CA` }], {
      keySize: 2048,
      algorithm: 'sha256',
      notAfterDate: notAfter,
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      ],
    });
    secrets.push(
      { type: secretKind.name, mesh, name: names.cert, spec: JSON.stringify({ data: base64(ca.cert) }) },
      { type: secretKind.name, mesh, name: names.key, spec: JSON.stringify({ data: base64(ca.private) }) },
    );
  }
  return secrets;
}

/** Names of the secrets a backend depends on (so they cannot be deleted under it). */
export function secretsUsedBy(mesh: string, backend: MtlsBackend): string[] {
  if (backend.type === 'builtin' && backend.name) {
    const names = builtinCaSecretNames(mesh, backend.name);
    return [names.cert, names.key];
  }
  const conf = backend.conf ?? {};
  return [conf.cert, conf.key]
    .map((source) => (source as DataSource | undefined)?.secret)
    .filter((name): name is string => typeof name === 'string' && name !== '');
}
