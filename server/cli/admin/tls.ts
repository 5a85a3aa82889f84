/**
 * `gatehouse tls renew-ca`: replaces the LAN mode's local CA through the running server's admin API
 * (`POST /api/admin/tls/ca/renew`, ops/plugin.ts): a new key for the machine's current names and
 * addresses, two years, served from the next handshake on, audited by the server. Devices must
 * install the new CA; the answer says where to get it and what fingerprint to compare.
 */
import { adminCommand } from '../admin-client.js';
import { formatFields, printJson } from '../output.js';

interface Certificate {
  fingerprint: string;
  notAfter: string;
}

interface TlsStatus {
  ca: Certificate | null;
  caUrl: string | null;
  plainHttpCaUrl: string | null;
  caNameConstraints: { dns: string[]; ips: string[] } | null;
}

export const tlsRenewCa = adminCommand({
  async run({ client, json }) {
    const answer = await client.request<TlsStatus>('POST', '/api/admin/tls/ca/renew');
    if (json) return printJson(answer);
    console.log('Renewed the local CA; the server already serves a certificate from it.');
    const fields: [string, string][] = [
      ['SHA-256', answer.ca?.fingerprint ?? '(unknown)'],
      ['Expires', answer.ca?.notAfter ?? '(unknown)'],
    ];
    if (answer.caNameConstraints) fields.push(['Vouches for', [...answer.caNameConstraints.dns, ...answer.caNameConstraints.ips].join(', ')]);
    if (answer.caUrl) fields.push(['Download', answer.caUrl]);
    if (answer.plainHttpCaUrl) fields.push(['Over http', answer.plainHttpCaUrl]);
    console.log(formatFields(fields));
    console.log('Install the new CA on every device (compare the fingerprint), then remove the old one: until then they do not trust this server.');
  },
});
