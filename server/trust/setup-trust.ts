/**
 * How an app's server trusts the local CA: one generator, by the app's runtime (spec
 * lan-trust.md, "Relying parties"). Every set-up text (the presets' notes, `trust` of
 * `GET /api/admin/applications/:id/setup`, the panel and `gatehouse app setup`) takes its lines
 * from here. Sources, checked 2025:
 * - Node.js: `NODE_EXTRA_CA_CERTS` adds the file's CAs to the built-in ones, read once at start-up
 *   (Node.js CLI documentation);
 * - Python: requests reads `REQUESTS_CA_BUNDLE` (requests, "SSL Cert Verification"); the ssl module
 *   and urllib read `SSL_CERT_FILE` (OpenSSL's default verify paths). Both *replace* the default
 *   bundle: an app that also calls public HTTPS sites needs a bundle holding both;
 * - PHP: `curl.cainfo` and `openssl.cafile` in php.ini (PHP manual, cURL and OpenSSL runtime
 *   configuration);
 * - Nextcloud: its own certificate store, `occ security:certificates:import`, and
 *   `allow_local_remote_servers` for a server on a private address (Nextcloud admin manual);
 * - Java: `keytool -importcert` into the JVM's cacerts (JDK keytool documentation);
 * - system: the operating system's store (Debian's update-ca-certificates), which OpenSSL-based
 *   programs and Go read, with `SSL_CERT_FILE` for one process.
 */
import type { SetupTrust, TrustRuntime } from '../http/lan-trust-wire.js';
import type { LocalCa } from './local-ca.js';

/**
 * `commands` always start with the download and the fingerprint check: curl fetches the CA
 * without verifying the server (`--insecure`: the server's certificate is what is being fetched),
 * so the check against the fingerprint the panel shows is what makes the file trustworthy.
 */
export function setupTrust(ca: LocalCa, caUrl: string, runtime: TrustRuntime, caPath: string): SetupTrust {
  const download = [`curl -fsS --insecure --create-dirs -o ${caPath} ${caUrl}`, `openssl x509 -noout -fingerprint -sha256 -in ${caPath}`];
  const base = { caUrl, fingerprintSha256: ca.fingerprintSha256, caPath, runtime };
  switch (runtime) {
    case 'node':
      return { ...base, env: { NODE_EXTRA_CA_CERTS: caPath }, settings: [], commands: download };
    case 'python':
      return { ...base, env: { REQUESTS_CA_BUNDLE: caPath, SSL_CERT_FILE: caPath }, settings: [], commands: download };
    case 'php':
      return {
        ...base,
        env: {},
        settings: [
          { file: 'php.ini', name: 'curl.cainfo', value: caPath },
          { file: 'php.ini', name: 'openssl.cafile', value: caPath },
        ],
        commands: download,
      };
    case 'nextcloud':
      return {
        ...base,
        env: {},
        settings: [{ file: 'config.php', name: 'allow_local_remote_servers', value: 'true' }],
        commands: [...download, `occ security:certificates:import ${caPath}`],
      };
    case 'java':
      return {
        ...base,
        env: {},
        settings: [],
        commands: [...download, `keytool -importcert -noprompt -cacerts -storepass changeit -alias gatehouse-ca -file ${caPath}`],
      };
    case 'system':
      return { ...base, env: { SSL_CERT_FILE: caPath }, settings: [], commands: download };
  }
}
