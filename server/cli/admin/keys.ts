/**
 * `gatehouse key rotate`: a new token-signing key through the running server's admin API
 * (`POST /api/admin/keys/rotate`): published at once, signing after the JWKS cache lifetime
 * (oauth/keys.ts), audited by the server. (`gatehouse rotate-keys` does the same on the data
 * directory, with or without a server.)
 */
import { adminCommand } from '../admin-client.js';
import { printJson } from '../output.js';

export const keyRotate = adminCommand({
  async run({ client, json }) {
    type Key = { kid: string; status: string; activatesAt: string; retiredAt: string | null; expiresAt: string | null };
    const answer = await client.request<{ key: Key; previous: Key[] }>('POST', '/api/admin/keys/rotate');
    if (json) return printJson(answer);
    console.log(`New signing key ${answer.key.kid} (${answer.key.status}): published now, signs from ${answer.key.activatesAt}.`);
    for (const key of answer.previous) console.log(`Key ${key.kid} (${key.status}) signs until ${key.retiredAt} and stays in the JWKS until ${key.expiresAt}.`);
  },
});
