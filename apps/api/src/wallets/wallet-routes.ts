import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor } from '../http/idempotency';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { adjustWallet } from './adjust-wallet';
import { createWallet } from './create-wallet';
import { issueWalletToken } from './issue-wallet-token';
import { listWalletEntries, listWallets } from './list-wallets';
import { replaceWalletToken } from './replace-wallet-token';
import { revokeWalletToken } from './revoke-wallet-token';
import {
  AdjustmentRequest,
  CreateWalletRequest,
  EntriesQuery,
  IssueTokenRequest,
  TokenChangeRequest,
  WalletsQuery,
} from './wallet-schemas';
import { loadWalletView } from './wallet-view';

const parseCreate = createParser(CreateWalletRequest);
const parseWalletsQuery = createParser(WalletsQuery, 'invalid_query');
const parseEntriesQuery = createParser(EntriesQuery, 'invalid_query');
const parseIssue = createParser(IssueTokenRequest);
const parseTokenChange = createParser(TokenChangeRequest);
const parseAdjustment = createParser(AdjustmentRequest);

const walletId = (req: Request) => idParam(req, 'wallet_not_found');
const tokenId = (req: Request) => idParam(req, 'wallet_token_not_found', 'tokenId');

/**
 * Wallets with tenant API keys: staff open and read wallets and issue or replace their tokens,
 * managers revoke tokens, admins adjust value. Token answers carry a secret shown once, so those
 * routes honour Idempotency-Key: a retry after a lost answer gets the same token. Adjustments
 * honour it too, so a retried credit is not a second credit.
 */
export function walletRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  const manager = requireRole(deps.db, 'manager');
  const admin = requireRole(deps.db, 'admin');
  const byApiKey = (req: Request) => operatorOf(req).keyId;
  const once = idempotencyFor(deps.redis, deps.config);

  router.post('/api/v1/wallets', staff, async (req, res) => {
    const { wallet, created } = await createWallet(deps.db, operatorOf(req), parseCreate(req.body));
    res.status(created ? 201 : 200).json(wallet);
  });
  router.get('/api/v1/wallets', staff, async (req, res) => {
    res.json(await listWallets(deps.db, operatorOf(req).tenantId, parseWalletsQuery(req.query)));
  });
  router.get('/api/v1/wallets/:id', staff, async (req, res) => {
    res.json(await loadWalletView(deps.db, operatorOf(req).tenantId, walletId(req)));
  });
  router.get('/api/v1/wallets/:id/entries', staff, async (req, res) => {
    const query = parseEntriesQuery(req.query);
    res.json(await listWalletEntries(deps.db, operatorOf(req).tenantId, walletId(req), query));
  });
  router.post('/api/v1/wallets/:id/tokens', staff, once('wallet-token', byApiKey), async (req, res) => {
    res.status(201).json(await issueWalletToken(deps.db, operatorOf(req), walletId(req), parseIssue(req.body)));
  });
  router.post(
    '/api/v1/wallets/:id/tokens/:tokenId/replace',
    staff,
    once('wallet-token-replace', byApiKey),
    async (req, res) => {
      const change = parseTokenChange(req.body ?? {});
      res.status(201).json(await replaceWalletToken(deps.db, operatorOf(req), walletId(req), tokenId(req), change));
    },
  );
  router.post('/api/v1/wallets/:id/tokens/:tokenId/revoke', manager, async (req, res) => {
    const change = parseTokenChange(req.body ?? {});
    res.json(await revokeWalletToken(deps.db, operatorOf(req), walletId(req), tokenId(req), change));
  });
  router.post('/api/v1/wallets/:id/adjustments', admin, once('wallet-adjustment', byApiKey), async (req, res) => {
    res.status(201).json(await adjustWallet(deps.db, operatorOf(req), walletId(req), parseAdjustment(req.body)));
  });
}
