export { keyName, keyPlace, missingKeyMessage, registerSigningKeyHooks, ZONE_TOKEN_PUBLIC_KEY_PREFIX, SigningKeys, type KeyPlace, type SigningKey, type TokenKind } from './signing-keys.js';
export { SigningKeyNotFound, tokenKindOf, TokenService, type DataplaneClaims, type TokenServiceOptions, type UserClaims, type Verification, type ZoneClaims } from './tokens.js';
export { bootstrapTokens, ADMIN_TOKEN_SECRET } from './bootstrap.js';
