// Mesh identities of proxies (docs/xds.md, mTLS): a certificate for each connected proxy, signed
// by the CA of its mesh's enabled mTLS backend, naming its services as SPIFFE URIs and its tags
// as `mesh://<tag>/<value>` URIs, which the receiving proxies' RBAC rules match.
import { createPrivateKey, webcrypto } from 'node:crypto';
import type { ResourceReader } from '@mesh/store';
import * as x509 from '@peculiar/x509';
import { builtinCaSecretNames, type DataSource, loadDataSource, type MeshMtls, type MtlsBackend } from './ca.js';

/** The CA of a mesh's enabled mTLS backend, as PEM. */
export interface MeshCa {
  readonly backend: string;
  readonly type: string;
  readonly certificatePem: string;
  readonly privateKeyPem: string;
  /** How long a proxy certificate is valid (`dpCert.rotation.expiration`, 24h by default). */
  readonly certificateValidityMs: number;
}

/** A proxy's mesh certificate and the CA certificate its peers are checked against. */
export interface IssuedIdentity {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
  readonly caPem: string;
  readonly notAfter: Date;
}

const DEFAULT_VALIDITY_MS = 24 * 3600 * 1000;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, y: 365 * 86_400_000 };

/** `dpCert.rotation.expiration` (`24h`, `30d`, ...). */
function validityOf(backend: MtlsBackend & { dpCert?: { rotation?: { expiration?: string } } }): number {
  const match = /^([0-9]+)(ms|s|m|h|d|w|y)$/.exec(backend.dpCert?.rotation?.expiration ?? '');
  const ms = match ? Number(match[1]) * (UNIT_MS[match[2]!] ?? 0) : 0;
  return ms > 0 ? ms : DEFAULT_VALIDITY_MS;
}

/** The CA of the mesh's enabled backend; undefined when mTLS is off. Throws when it cannot be read. */
export async function loadMeshCa(store: ResourceReader, mesh: string, mtls: MeshMtls | undefined): Promise<MeshCa | undefined> {
  const name = mtls?.enabledBackend;
  if (!name) return undefined;
  const backend = (mtls.backends ?? []).find((candidate) => candidate.name === name);
  if (!backend) throw new Error(`mTLS backend ${name} of mesh ${mesh} is not defined`);
  let certificatePem: string;
  let privateKeyPem: string;
  if (backend.type === 'builtin') {
    const names = builtinCaSecretNames(mesh, name);
    certificatePem = await loadDataSource({ store }, mesh, { secret: names.cert });
    privateKeyPem = await loadDataSource({ store }, mesh, { secret: names.key });
  } else {
    const conf = backend.conf ?? {};
    certificatePem = await loadDataSource({ store }, mesh, conf.cert as DataSource);
    privateKeyPem = await loadDataSource({ store }, mesh, conf.key as DataSource);
  }
  return { backend: name, type: backend.type ?? '', certificatePem, privateKeyPem, certificateValidityMs: validityOf(backend) };
}

/** A CA key ready to sign, and its signature algorithm. */
interface SigningKey {
  readonly key: webcrypto.CryptoKey;
  readonly algorithm: { name: string; hash: string };
}

const PROXY_KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/** The CA key for signing, with the signature algorithm its type calls for. */
async function importSigningKey(privateKeyPem: string): Promise<SigningKey> {
  const keyObject = createPrivateKey(privateKeyPem);
  const der = keyObject.export({ format: 'der', type: 'pkcs8' });
  if (keyObject.asymmetricKeyType === 'ec') {
    const namedCurve = keyObject.asymmetricKeyDetails?.namedCurve === 'secp384r1' ? 'P-384' : 'P-256';
    const key = await webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve }, false, ['sign']);
    return { key, algorithm: { name: 'ECDSA', hash: 'SHA-256' } };
  }
  const key = await webcrypto.subtle.importKey('pkcs8', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
  return { key, algorithm: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } };
}

const signingKeys = new Map<string, Promise<SigningKey>>();

/**
 * Issues a proxy's mesh certificate: a fresh P-256 key, URI SANs `spiffe://<mesh>/<service>` for
 * each service and `mesh://<tag>/<value>` for each tag value, valid from a minute ago for the
 * backend's validity.
 */
export async function issueMeshIdentity(
  ca: MeshCa,
  proxy: { mesh: string; services: readonly string[]; tags: Readonly<Record<string, readonly string[]>> },
  now: Date = new Date(),
): Promise<IssuedIdentity> {
  // The library's types name the DOM's Crypto, which Node's webcrypto is at run time.
  x509.cryptoProvider.set(webcrypto as never);
  let signing = signingKeys.get(ca.privateKeyPem);
  if (!signing) {
    signing = importSigningKey(ca.privateKeyPem);
    signingKeys.set(ca.privateKeyPem, signing);
  }
  const { key: signingKey, algorithm } = await signing;
  const caCert = new x509.X509Certificate(ca.certificatePem);
  const keys = await webcrypto.subtle.generateKey(PROXY_KEY_ALGORITHM, true, ['sign', 'verify']);
  const uris = [
    ...[...new Set(proxy.services)].sort().map((service) => `spiffe://${proxy.mesh}/${service}`),
    ...Object.keys(proxy.tags)
      .sort()
      .flatMap((tag) => [...new Set(proxy.tags[tag])].sort().map((value) => `mesh://${tag}/${value}`)),
  ];
  const notBefore = new Date(now.getTime() - 60_000);
  const notAfter = new Date(now.getTime() + ca.certificateValidityMs);
  const certificate = await x509.X509CertificateGenerator.create({
    subject: `O=${proxy.mesh}`,
    issuer: caCert.subject,
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.keyAgreement, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension(uris.map((value) => ({ type: 'url' as const, value })), true),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const privateKeyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
  return { certificatePem: certificate.toString('pem'), privateKeyPem, caPem: ca.certificatePem, notAfter };
}
