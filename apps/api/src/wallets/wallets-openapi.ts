import { ok, pageParams, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import {
  AdjustmentRequest,
  CreateWalletRequest,
  IssuedWalletToken,
  IssueTokenRequest,
  TokenChangeRequest,
  WalletEntryList,
  WalletEntryView,
  WalletList,
  WalletLotView,
  WalletSummary,
  WalletTokenView,
  WalletView,
} from './wallet-schemas';

const walletId = uuidPathParam('the wallet id');
const tokenId = {
  name: 'tokenId',
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'uuid' },
  description: 'the token id',
};
const walletNotFound = 'no such wallet in this tenant (also for an id that is not a uuid)';
const tokenErrors = {
  wallet_not_found: walletNotFound,
  wallet_token_not_found: 'no such token on this wallet (also for an id that is not a uuid)',
  wallet_token_revoked: 'the token was revoked or replaced already',
};

export const walletsOpenApi: OpenApiFeature = {
  tag: {
    name: 'Wallets',
    description:
      'Stored value per customer and currency: balance, holds, funding lots that expire, the append-only ledger, and the card or QR tokens that spend it at the till.',
  },
  operations: [
    {
      method: 'post',
      path: '/api/v1/wallets',
      operationId: 'createWallet',
      summary: "Open a customer's wallet in a currency, or get the one they have (staff+)",
      description:
        'One wallet per customer and currency: 201 when it was made, 200 with the existing one otherwise. It starts empty.',
      access: apiKeyOf('staff'),
      requestBody: {
        schema: CreateWalletRequest,
        example: { customer_id: '5b1f0c8e-2a3d-4e5f-8a9b-0c1d2e3f4a5b', currency: 'USD' },
      },
      responses: { 200: ok('The wallet the customer had', WalletView), 201: ok('The new, empty wallet', WalletView) },
      errors: {
        invalid_body: 'customer_id not a uuid, currency not three upper-case letters, or another field',
        customer_not_found: 'no such customer in this tenant',
      },
    },
    {
      method: 'get',
      path: '/api/v1/wallets',
      operationId: 'listWallets',
      summary: "The tenant's wallets, oldest first (staff+)",
      access: apiKeyOf('staff'),
      parameters: [
        ...pageParams('next_starting_after of the previous page'),
        { name: 'customer_id', in: 'query', required: false, schema: { type: 'string', format: 'uuid' } },
        { name: 'currency', in: 'query', required: false, schema: { type: 'string', pattern: '^[A-Z]{3}$' } },
      ],
      strictQuery: true,
      responses: { 200: ok('A page of wallets', WalletList) },
      errors: {
        invalid_query: 'a bad limit, starting_after, customer_id or currency, or an unknown parameter',
        wallet_not_found: 'starting_after names no wallet of this tenant',
      },
    },
    {
      method: 'get',
      path: '/api/v1/wallets/{id}',
      operationId: 'getWallet',
      summary: 'A wallet with its balance, holds, lots and tokens (staff+)',
      access: apiKeyOf('staff'),
      parameters: [walletId],
      responses: { 200: ok('The wallet', WalletView) },
      errors: { wallet_not_found: walletNotFound },
    },
    {
      method: 'get',
      path: '/api/v1/wallets/{id}/entries',
      operationId: 'listWalletEntries',
      summary: "A wallet's ledger, newest first (staff+)",
      description:
        'Every change of the balance or the hold, in the order written: fund, hold, release, capture, refund_credit, funding_return, expire, adjustment. balance_after and held_after are the wallet after the entry.',
      access: apiKeyOf('staff'),
      parameters: [walletId, ...pageParams('next_starting_after of the previous page')],
      strictQuery: true,
      responses: { 200: ok('A page of ledger entries', WalletEntryList) },
      errors: {
        wallet_not_found: `${walletNotFound}; or starting_after names no entry of this wallet`,
        invalid_query: 'a bad limit or starting_after, or an unknown parameter',
      },
    },
    {
      method: 'post',
      path: '/api/v1/wallets/{id}/tokens',
      operationId: 'issueWalletToken',
      summary: 'Issue a card or QR token that spends the wallet at the till (staff+)',
      description:
        'The secret is in this answer only; the service keeps its SHA-256 and last four characters. Records wallet.access_changed (issued), never with the secret.',
      access: apiKeyOf('staff'),
      parameters: [walletId],
      idempotency: 'Scoped to the route and the API key',
      requestBody: { schema: IssueTokenRequest, example: { kind: 'card' } },
      responses: { 201: ok('The token and its secret, shown once', IssuedWalletToken) },
      errors: { invalid_body: 'kind is not card or qr', wallet_not_found: walletNotFound },
    },
    {
      method: 'post',
      path: '/api/v1/wallets/{id}/tokens/{tokenId}/replace',
      operationId: 'replaceWalletToken',
      summary: 'Replace a token with a new one of the same kind (staff+)',
      description:
        'The old token is revoked and points at its successor. Records one wallet.access_changed (replaced) with previous_token_id.',
      access: apiKeyOf('staff'),
      parameters: [walletId, tokenId],
      idempotency: 'Scoped to the route and the API key',
      requestBody: { schema: TokenChangeRequest, example: { reason: 'card damaged' }, required: false },
      responses: { 201: ok('The new token and its secret, shown once', IssuedWalletToken) },
      errors: { invalid_body: 'reason empty or over 500 characters', ...tokenErrors },
    },
    {
      method: 'post',
      path: '/api/v1/wallets/{id}/tokens/{tokenId}/revoke',
      operationId: 'revokeWalletToken',
      summary: 'Revoke a token, e.g. a lost card (manager+)',
      description: 'From the commit on the token spends nothing. Records wallet.access_changed (revoked).',
      access: apiKeyOf('manager'),
      parameters: [walletId, tokenId],
      requestBody: { schema: TokenChangeRequest, example: { reason: 'reported lost' }, required: false },
      responses: { 200: ok('The revoked token', WalletTokenView) },
      errors: { invalid_body: 'reason empty or over 500 characters', ...tokenErrors },
    },
    {
      method: 'post',
      path: '/api/v1/wallets/{id}/adjustments',
      operationId: 'adjustWallet',
      summary: 'Credit or debit a wallet by hand, with a reason (admin)',
      description:
        'A positive amount is a credit that never expires; a negative one debits available value. Written to the ledger as an adjustment with the actor and the reason; no webhook event.',
      access: apiKeyOf('admin'),
      parameters: [walletId],
      idempotency: 'Scoped to the route and the API key: a retried adjustment is applied once',
      requestBody: { schema: AdjustmentRequest, example: { amount_cents: 500, reason: 'goodwill: ride closed' } },
      responses: { 201: ok('The wallet after the adjustment', WalletView) },
      errors: {
        invalid_body: 'amount_cents zero, not an integer or beyond ±100000000; reason missing or over 500 characters',
        wallet_not_found: walletNotFound,
        insufficient_wallet_balance: 'a debit above the available value (detail: available_cents, currency)',
        wallet_limit_exceeded:
          'the wallet would hold more than 1000000000 (10,000,000.00): stored value is capped (detail.max_balance_cents, balance_cents)',
      },
    },
  ],
  schemas: [
    CreateWalletRequest,
    IssueTokenRequest,
    TokenChangeRequest,
    AdjustmentRequest,
    WalletLotView,
    WalletTokenView,
    IssuedWalletToken,
    WalletSummary,
    WalletView,
    WalletList,
    WalletEntryView,
    WalletEntryList,
  ],
};
