/**
 * What the trust page offers (spec lan-trust.md, "The trust page"): the CA in the forms each
 * platform reads, Firefox's enterprise policy, and the one-line commands. Only certificates: the
 * CA's key never passes through here.
 *
 * Content types: PEM as `application/x-pem-file` (`.pem`) and `application/x-x509-ca-cert`
 * (`.crt`, which Android and Windows offer to install as a CA); DER as `application/pkix-cert`
 * (RFC 2585 §4.1, `.cer`, what Windows' certutil and Import-Certificate read); the profile as
 * `application/x-apple-aspen-config` (what iOS Safari hands to Settings).
 */
import type { LocalCa } from './local-ca.js';
import { mobileconfig } from './mobileconfig.js';

export interface TrustFile {
  type: string;
  body(ca: LocalCa, issuer: string): string | Buffer;
}

export const TRUST_FILES: Readonly<Record<string, TrustFile>> = {
  'gatehouse-ca.pem': { type: 'application/x-pem-file', body: (ca) => ca.pem },
  'gatehouse-ca.crt': { type: 'application/x-x509-ca-cert', body: (ca) => ca.pem },
  'gatehouse-ca.cer': { type: 'application/pkix-cert', body: (ca) => ca.der },
  'gatehouse-ca.mobileconfig': { type: 'application/x-apple-aspen-config', body: (ca, issuer) => mobileconfig(ca, issuer) },
  'firefox-policies.json': { type: 'application/json', body: () => `${JSON.stringify(firefoxPolicies(), null, 2)}\n` },
};

/**
 * Firefox's enterprise policy (Mozilla policy-templates, "Certificates"): trust the operating
 * system's roots (Windows, macOS) and install gatehouse-ca.crt from Firefox's certificate folder.
 */
export function firefoxPolicies() {
  return { policies: { Certificates: { ImportEnterpriseRoots: true, Install: ['gatehouse-ca.crt'] } } };
}

/** The commands, exactly as the trust page shows them (run where the downloaded file is). */
export const TRUST_COMMANDS = {
  windowsCertutil: 'certutil -addstore -f Root gatehouse-ca.cer',
  windowsPowerShell: 'Import-Certificate -FilePath gatehouse-ca.cer -CertStoreLocation Cert:\\LocalMachine\\Root',
  debian: 'sudo cp gatehouse-ca.crt /usr/local/share/ca-certificates/ && sudo update-ca-certificates',
  trustAnchor: 'sudo trust anchor --store gatehouse-ca.crt',
  nss: 'certutil -d sql:$HOME/.pki/nssdb -A -t "C,," -n "Gatehouse CA" -i gatehouse-ca.crt',
} as const;

/** `/trust.json`: the CA's fingerprint and expiry, absolute download URLs and the commands. */
export function trustJson(ca: LocalCa, base: string) {
  return {
    fingerprintSha256: ca.fingerprintSha256,
    notAfter: ca.notAfter.toISOString(),
    downloads: {
      pem: `${base}/trust/gatehouse-ca.pem`,
      crt: `${base}/trust/gatehouse-ca.crt`,
      cer: `${base}/trust/gatehouse-ca.cer`,
      mobileconfig: `${base}/trust/gatehouse-ca.mobileconfig`,
      firefoxPolicies: `${base}/trust/firefox-policies.json`,
    },
    commands: TRUST_COMMANDS,
  };
}
