/**
 * GATEHOUSE_TLS=acme's settings (server/config.ts, docs/configuration.md): the defaults, and each
 * mistake refused at start-up with one sentence naming its variable (never at the first renewal).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, LETS_ENCRYPT_DIRECTORY, loadConfig } from '../../server/config.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-acme-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const secretFile = join(dir, 'tsig.secret');
writeFileSync(secretFile, 'c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=\n');

const base = {
  GATEHOUSE_TLS: 'acme',
  GATEHOUSE_ACME_DOMAINS: 'ID.Home.Example.com., *.home.example.com',
  GATEHOUSE_ACME_AGREE_TOS: 'yes',
  GATEHOUSE_ACME_RFC2136_SERVER: '192.168.1.2',
  GATEHOUSE_ACME_RFC2136_TSIG_NAME: 'Gatehouse-ACME.',
  GATEHOUSE_ACME_RFC2136_TSIG_SECRET_FILE: secretFile,
};

describe('GATEHOUSE_TLS=acme settings', () => {
  it('reads them with their defaults: Let\'s Encrypt, rfc2136, port 53, hmac-sha256, the zone by SOA', () => {
    const { tls } = loadConfig(base);
    expect(tls).toEqual({
      mode: 'acme',
      extraNames: [],
      acme: {
        domains: ['id.home.example.com', '*.home.example.com'],
        directory: LETS_ENCRYPT_DIRECTORY,
        email: undefined,
        caFile: undefined,
        dns: 'rfc2136',
        rfc2136: { host: '192.168.1.2', port: 53, tsigName: 'gatehouse-acme', tsigAlgorithm: 'hmac-sha256', tsigSecretFile: secretFile, zone: undefined },
      },
    });
    expect(loadConfig({ ...base, GATEHOUSE_ACME_RFC2136_SERVER: '[::1]:5353', GATEHOUSE_ACME_RFC2136_ZONE: 'home.example.com.' }).tls).toMatchObject({
      acme: { rfc2136: { host: '::1', port: 5353, zone: 'home.example.com' } },
    });
  });

  it('refuses each mistake with one sentence naming its variable', () => {
    const cases: [Record<string, string | undefined>, string][] = [
      [{ GATEHOUSE_ACME_AGREE_TOS: undefined }, 'GATEHOUSE_TLS=acme needs GATEHOUSE_ACME_AGREE_TOS=yes'],
      [{ GATEHOUSE_ACME_AGREE_TOS: 'true' }, 'GATEHOUSE_TLS=acme needs GATEHOUSE_ACME_AGREE_TOS=yes'],
      [{ GATEHOUSE_ACME_DOMAINS: undefined }, 'GATEHOUSE_TLS=acme needs GATEHOUSE_ACME_DOMAINS (the names the certificate is for, comma-separated).'],
      [{ GATEHOUSE_ACME_DOMAINS: 'gatehouse' }, 'GATEHOUSE_ACME_DOMAINS: "gatehouse" is not a DNS name.'],
      [{ GATEHOUSE_ACME_DOMAINS: 'a b.example.com' }, 'GATEHOUSE_ACME_DOMAINS: "a b.example.com" is not a DNS name.'],
      [{ GATEHOUSE_ACME_DIRECTORY: 'http://acme.example/dir' }, 'GATEHOUSE_ACME_DIRECTORY must be an https URL, got "http://acme.example/dir".'],
      [{ GATEHOUSE_ACME_EMAIL: 'nobody' }, 'GATEHOUSE_ACME_EMAIL must be an e-mail address, got "nobody".'],
      [{ GATEHOUSE_ACME_CA_FILE: join(dir, 'missing.pem') }, `GATEHOUSE_ACME_CA_FILE names ${join(dir, 'missing.pem')}, which does not exist.`],
      [{ GATEHOUSE_ACME_DNS: 'cloudflare' }, 'GATEHOUSE_ACME_DNS must be "rfc2136" (dynamic DNS updates signed with TSIG), got "cloudflare".'],
      [{ GATEHOUSE_ACME_RFC2136_SERVER: undefined }, 'GATEHOUSE_TLS=acme needs GATEHOUSE_ACME_RFC2136_SERVER (the DNS server that takes dynamic updates, host:port).'],
      [{ GATEHOUSE_ACME_RFC2136_SERVER: 'ns1:99999' }, 'GATEHOUSE_ACME_RFC2136_SERVER must be host:port (port 53 when left out), got "ns1:99999".'],
      [{ GATEHOUSE_ACME_RFC2136_TSIG_NAME: undefined }, "GATEHOUSE_TLS=acme needs GATEHOUSE_ACME_RFC2136_TSIG_NAME (the TSIG key's name, as the DNS server knows it)."],
      [{ GATEHOUSE_ACME_RFC2136_TSIG_ALGORITHM: 'hmac-md5' }, 'GATEHOUSE_ACME_RFC2136_TSIG_ALGORITHM must be one of hmac-sha256, hmac-sha384, hmac-sha512, got "hmac-md5".'],
      [{ GATEHOUSE_ACME_RFC2136_TSIG_SECRET_FILE: undefined }, "GATEHOUSE_TLS=acme needs GATEHOUSE_ACME_RFC2136_TSIG_SECRET_FILE (a file holding the TSIG key's secret, base64)."],
      [{ GATEHOUSE_ACME_RFC2136_TSIG_SECRET_FILE: join(dir, 'nope') }, `GATEHOUSE_ACME_RFC2136_TSIG_SECRET_FILE names ${join(dir, 'nope')}, which does not exist.`],
      [{ GATEHOUSE_ACME_RFC2136_ZONE: 'not a zone' }, 'GATEHOUSE_ACME_RFC2136_ZONE must be a DNS name, got "not a zone".'],
      [{ GATEHOUSE_TLS: 'letsencrypt' }, 'GATEHOUSE_TLS must be "auto", "acme" or "off", got "letsencrypt".'],
    ];
    for (const [change, message] of cases) {
      const env = { ...base, ...change };
      for (const [name, value] of Object.entries(change)) if (value === undefined) delete env[name as keyof typeof env];
      let thrown: unknown;
      try {
        loadConfig(env);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, message).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message, JSON.stringify(change)).toContain(message);
    }
  });
});
