/**
 * `gatehouse key rotate`: new token-signing keys, one of every algorithm, through the running
 * server's admin API (`POST /api/admin/keys/rotate`): published at once, signing after the JWKS
 * cache lifetime (oauth/keys.ts), audited by the server. (`gatehouse rotate-keys` does the same on the data
 * directory, with or without a server.)
 */
import { adminCommand } from '../admin-client.js';
import { printJson } from '../output.js';

export const keyRotate = adminCommand({
  async run({ client, json }) {
    type Key = { kid: string; alg: string; status: string; activatesAt: string; retiredAt: string | null; expiresAt: string | null };
    const answer = await client.request<{ key: Key; keys: Key[]; previous: Key[] }>('POST', '/api/admin/keys/rotate');
    if (json) return printJson(answer);
    // Every algorithm's key rotates at once (RS256, ES256, EdDSA): one line each.
    for (const key of answer.keys) console.log(`New ${key.alg} signing key ${key.kid} (${key.status}): published now, signs from ${key.activatesAt}.`);
    for (const key of answer.previous) console.log(`Key ${key.kid} (${key.alg}, ${key.status}) signs until ${key.retiredAt} and stays in the JWKS until ${key.expiresAt}.`);
  },
});
