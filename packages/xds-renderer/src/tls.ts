// TLS pieces: mesh mTLS with certificates delivered over SDS, TLS to external services,
// the admin listener's static mTLS, and the Secret resources themselves.
import { isIpAddress } from '@mesh/model';
import { adsConfigSource, FILTER, type JsonObject, type Secret, TYPE, type TypedObject } from './envoy.js';
import type { ExternalServiceTls } from './mesh-context.js';
import { ADMIN_CLIENT_SAN, identityCertSecretName, MESH_ALPN, meshCaSecretName, meshSpiffePrefix, serviceSpiffeId } from './names.js';

const sdsSecret = (name: string): JsonObject => ({ name, sdsConfig: adsConfigSource() });

export const tlsTransportSocket = (context: TypedObject): JsonObject => ({ name: FILTER.tlsTransportSocket, typedConfig: context });

/** The proxy's identity certificate, validated peers signed by the mesh CA with a matching URI SAN. */
function meshCommonTlsContext(mesh: string, sanMatcher: JsonObject): JsonObject {
  return {
    combinedValidationContext: {
      defaultValidationContext: { matchTypedSubjectAltNames: [{ sanType: 'URI', matcher: sanMatcher }] },
      validationContextSdsSecretConfig: sdsSecret(meshCaSecretName(mesh)),
    },
    tlsCertificateSdsSecretConfigs: [sdsSecret(identityCertSecretName(mesh))],
  };
}

/** Inbound side: any client of the mesh, which must present a certificate. */
export const downstreamMeshTls = (mesh: string): TypedObject => ({
  '@type': TYPE.downstreamTlsContext,
  commonTlsContext: meshCommonTlsContext(mesh, { prefix: meshSpiffePrefix(mesh) }),
  requireClientCertificate: true,
});

/** Outbound side: the upstream must be the given service of the mesh; ALPN tells the inbound it is mesh mTLS. */
export function upstreamMeshTls(mesh: string, upstreamService: string, sni: string): TypedObject {
  const common = meshCommonTlsContext(mesh, { exact: serviceSpiffeId(mesh, upstreamService) });
  return { '@type': TYPE.upstreamTlsContext, commonTlsContext: { ...common, alpnProtocols: [MESH_ALPN] }, ...(sni ? { sni } : {}) };
}

const isDnsName = (host: string): boolean => !isIpAddress(host) && /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*\.?$/.test(host);

/** TLS to a server outside the mesh, verified against the external service's CA when it has one. */
export function upstreamExternalTls(host: string, tls: ExternalServiceTls): TypedObject {
  // SNI can only be a host name.
  const sni = tls.serverName || (isDnsName(host) ? host : '');
  const context: TypedObject = { '@type': TYPE.upstreamTlsContext };
  if (tls.allowRenegotiation) context.allowRenegotiation = true;
  if (sni) context.sni = sni;
  const common: JsonObject = {};
  if (tls.clientCert && tls.clientKey) common.tlsCertificates = [{ certificateChain: tls.clientCert, privateKey: tls.clientKey }];
  if (tls.caCert) {
    const validation: JsonObject = { trustedCa: tls.caCert };
    if (!tls.skipHostnameVerification) {
      const expected = sni || host;
      validation.matchTypedSubjectAltNames = ['DNS', 'IP_ADDRESS'].map((sanType) => ({ sanType, matcher: { exact: expected } }));
    }
    common.validationContext = validation;
  }
  if (Object.keys(common).length > 0) context.commonTlsContext = common;
  return context;
}

/** PEM material for static TLS contexts and Secrets (text, encoded to base64 here). */
export interface CertificatePair {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
}

const inlinePem = (pem: string): JsonObject => ({ inlineBytes: Buffer.from(pem).toString('base64') });

/** The admin listener's TLS chain: only the control plane's client certificate is accepted. */
export function adminStaticMtls(server: CertificatePair, caPem: string): TypedObject {
  return {
    '@type': TYPE.downstreamTlsContext,
    commonTlsContext: {
      tlsCertificates: [{ certificateChain: inlinePem(server.certificatePem), privateKey: inlinePem(server.privateKeyPem) }],
      validationContext: { trustedCa: inlinePem(caPem), matchTypedSubjectAltNames: [{ sanType: 'DNS', matcher: { exact: ADMIN_CLIENT_SAN } }] },
    },
    requireClientCertificate: true,
  };
}

/** A proxy's mesh identity: its certificate and the CA certificates it trusts. */
export interface MeshIdentity extends CertificatePair {
  readonly caPem: string;
}

/** The two SDS secrets mesh mTLS refers to. */
export function meshSecrets(mesh: string, identity: MeshIdentity): Secret[] {
  return [
    {
      '@type': TYPE.secret,
      name: identityCertSecretName(mesh),
      tlsCertificate: { certificateChain: inlinePem(identity.certificatePem), privateKey: inlinePem(identity.privateKeyPem) },
    },
    { '@type': TYPE.secret, name: meshCaSecretName(mesh), validationContext: { trustedCa: inlinePem(identity.caPem) } },
  ];
}
