/**
 * `gatehouse key rotate`: new token-signing keys, one of every algorithm, through the running
 * server's admin API (`POST /api/admin/keys/rotate`): published at once, signing after the JWKS
 * cache lifetime (oauth/keys.ts), audited by the server. (`gatehouse rotate-keys` does the same on the data
 * directory, with or without a server.)
 *
 * `gatehouse key rotate --saml`: the SAML identity provider's next signing certificate instead
 * (`POST /api/admin/saml/keys/rotate`, spec saml.md: "Rotation publishes the next certificate in
 * the metadata before it signs"): in the metadata at once, signing after
 * GATEHOUSE_SAML_KEY_ACTIVATION_HOURS; both certificates are shown, by SHA-256 fingerprint.
 */
import { adminCommand, type AdminClient } from '../admin-client.js';
import { printJson } from '../output.js';

type SamlKey = { id: string; status: string; fingerprint: string; activatesAt: string; retiredAt: string | null; expiresAt: string | null };

async function rotateSaml(client: AdminClient, json: boolean) {
  const answer = await client.request<{ key: SamlKey; previous: SamlKey[] }>('POST', '/api/admin/saml/keys/rotate');
  if (json) return printJson(answer);
  const { metadataUrl } = await client.request<{ metadataUrl: string }>('GET', '/api/admin/saml/keys');
  const { key } = answer;
  console.log(`New SAML signing certificate ${key.id} (${key.status}, SHA-256 ${key.fingerprint}): in ${metadataUrl} now, signs from ${key.activatesAt}.`);
  for (const old of answer.previous) console.log(`Certificate ${old.id} (${old.status}, SHA-256 ${old.fingerprint}) signs until ${old.retiredAt} and stays in the metadata until ${old.expiresAt}.`);
  console.log('SAML apps that were given the certificate rather than the metadata URL need the new one before it signs.');
}

export const keyRotate = adminCommand({
  flags: { saml: { type: 'boolean', help: "rotate the SAML identity provider's signing certificate instead (published now, signs after GATEHOUSE_SAML_KEY_ACTIVATION_HOURS)" } },
  async run({ client, values, json }) {
    if (values.saml === true) return rotateSaml(client, json);
    type Key = { kid: string; alg: string; status: string; activatesAt: string; retiredAt: string | null; expiresAt: string | null };
    const answer = await client.request<{ key: Key; keys: Key[]; previous: Key[] }>('POST', '/api/admin/keys/rotate');
    if (json) return printJson(answer);
    // Every algorithm's key rotates at once (RS256, ES256, EdDSA): one line each.
    for (const key of answer.keys) console.log(`New ${key.alg} signing key ${key.kid} (${key.status}): published now, signs from ${key.activatesAt}.`);
    for (const key of answer.previous) console.log(`Key ${key.kid} (${key.alg}, ${key.status}) signs until ${key.retiredAt} and stays in the JWKS until ${key.expiresAt}.`);
  },
});
