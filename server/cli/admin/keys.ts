/**
 * `gatehouse key rotate`: a new token-signing key through the running server's admin API
 * (`POST /api/admin/keys/rotate`), so the server starts signing with it and audits it at once.
 * (`gatehouse rotate-keys` does the same on the data directory, with or without a server.)
 */
import { adminCommand } from '../admin-client.js';
import { printJson } from '../output.js';

export const keyRotate = adminCommand({
  async run({ client, json }) {
    const answer = await client.request<{ key: { kid: string; status: string }; retired: string[] }>('POST', '/api/admin/keys/rotate');
    if (json) return printJson(answer);
    console.log(`New signing key ${answer.key.kid} (${answer.key.status}).`);
    for (const kid of answer.retired) console.log(`Key ${kid} stays in the JWKS until the tokens it signed have expired.`);
  },
});
