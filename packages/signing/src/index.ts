export { signToken, verifyToken, TokenError } from './tokens';
export type { TokenPurpose, TokenFailure } from './tokens';
export { generateApiKey, parseApiKey, hashSecret, secretMatches } from './api-keys';
export type { GeneratedApiKey, ParsedApiKey } from './api-keys';
export { generateGiftCardCode, normalizeGiftCardCode, hashGiftCardCode } from './gift-card-codes';
export { signWebhookPayload, generateWebhookSecret } from './webhook-signature';
export { sealSecret, openSecret } from './secret-box';
export { generateWalletToken, hashWalletToken, normalizeWalletToken, walletTokenLast4 } from './wallet-tokens';
export type { WalletTokenKind } from './wallet-tokens';
