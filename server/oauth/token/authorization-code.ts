/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6, RFC 8707, DESIGN §4.10).
 * The code must be live, unused, issued to this client for this `redirect_uri`; a code sent with
 * a challenge needs the S256 verifier, and a verifier without a challenge is refused; `resource`,
 * when sent, must equal the one authorized; the rules shared with the device grant (audience,
 * membership, session) and the issue itself are session-grant.ts.
 * Any exchange attempt by its client spends the code, successful or not; presenting a spent code
 * again revokes the refresh-token family its first exchange created. Codes are kept in memory
 * (authorize/code.ts), on PostgreSQL in the database (authorize/code-table.ts).
 */
import type { OAuthClient } from '../client-auth.js';
import type { AppContext } from '../../context.js';
import { revokeFamilies } from '../revoke-families.js';
import { invalidGrant, invalidRequest, invalidTarget } from '../errors.js';
import type { KeyRing } from '../keys.js';
import { param, requiredParam, type RawParams } from '../params.js';
import { verifiesChallenge } from '../pkce.js';
import type { TokenResponse } from './response.js';
import { issueSessionTokens } from './session-grant.js';
import { engineOf, transaction } from '../../db/store.js';
import { noteCodeFamily, spendStoredCode } from '../authorize/code-table.js';
import { codeStoreOf } from '../authorize/code.js';

export async function authorizationCodeGrant(ctx: AppContext, keys: KeyRing, client: OAuthClient, body: RawParams): Promise<TokenResponse> {
  const code = requiredParam(body, 'code');
  const redirectUri = requiredParam(body, 'redirect_uri');
  const verifier = param(body, 'code_verifier');
  const resource = param(body, 'resource');
  const now = ctx.clock.now();
  // PostgreSQL: codes live in the database and are spent by one conditional update (code-table.ts).
  const stored = engineOf(ctx.db) === 'postgres';
  const row = stored ? await spendStoredCode(ctx.db, code, client.id, now) : codeStoreOf(ctx).find(code, now);
  if (!row || row.applicationId !== client.id) throw invalidGrant('The authorization code is not valid.');
  if (row.spent) {
    if (row.issuedFamilyId) {
      const familyId = row.issuedFamilyId;
      await transaction(ctx.db, async (tx) => revokeFamilies(tx, now, { familyId }, 'code_replayed'));
    }
    throw invalidGrant('The authorization code has already been used.');
  }
  // Spent by this attempt whatever its outcome: a code that failed a check once (wrong verifier,
  // wrong redirect_uri) is not tried again (the OAuth security BCP, RFC 9700). From here to the
  // signing there is no await, and one process serves the data directory, so a concurrent
  // exchange of the same code finds it spent. (PostgreSQL: spent above, by the conditional update.)
  row.spent = true;
  if (row.expiresAt <= now.getTime()) throw invalidGrant('The authorization code has expired.');
  if (row.redirectUri !== redirectUri) throw invalidGrant('redirect_uri does not match the authorization request.');
  if (row.codeChallenge) {
    if (verifier === undefined) throw invalidRequest('code_verifier is required: the authorization request sent a code_challenge.');
    if (!verifiesChallenge(verifier, row.codeChallenge)) throw invalidGrant('code_verifier does not match the code_challenge.');
  } else if (verifier !== undefined) {
    throw invalidGrant('code_verifier was sent but the authorization request had no code_challenge.');
  }
  if (resource !== undefined && resource !== row.resource) throw invalidTarget('resource does not match the authorization request.');

  const onFamily = stored
    ? (familyId: string) => noteCodeFamily(ctx.db, code, familyId)
    : (familyId: string) => void (row.issuedFamilyId = familyId);
  return issueSessionTokens(ctx, keys, client, { ...row, given: 'this code was issued', grantType: 'authorization_code' }, { onFamily });
}
