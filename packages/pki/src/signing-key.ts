import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

const generateRsaKeyPair = promisify(generateKeyPair);

/** A new 2048-bit RSA token signing key as PKCS#1 PEM, base64 as a secret's `data` (docs/tokens.md). */
export async function generateSigningKeyData(): Promise<string> {
  const { privateKey } = await generateRsaKeyPair('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return Buffer.from(privateKey).toString('base64');
}
