/**
 * The trust page (`/trust`): how each kind of device trusts the local CA, in plain words, with the
 * downloads and commands of downloads.ts. No script, no form, no outside resource: its one style
 * block is allowed by its hash, everything else by nothing (the strictest CSP otherwise).
 *
 * The steps cite the vendors' documentation they follow (docs/trust.md says which were run here):
 * Apple HT204477 (iOS Certificate Trust Settings), Microsoft's certutil and Import-Certificate
 * references, Debian's update-ca-certificates(8), p11-kit's trust(1), Mozilla's policy-templates
 * ("Certificates") and NSS certutil, and Android's "Network security configuration" (apps that
 * target API level 24 or later trust only the system's CAs unless they opt in).
 */
import { createHash } from 'node:crypto';
import type { LocalCa } from './local-ca.js';
import { TRUST_COMMANDS } from './downloads.js';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:0 auto;padding:1rem}
code,pre{font-family:ui-monospace,monospace;overflow-wrap:anywhere}pre{white-space:pre-wrap;background:#8882;padding:.5rem;border-radius:4px}
section{border-top:1px solid #8886;margin-top:1.5rem}nav a{margin-right:.75rem}`;

/** The page's CSP: its own style block by hash, nothing else. */
export const TRUST_PAGE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; img-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

export interface TrustPageOptions {
  /** Absolute base of the links (the listener the page came over). */
  base: string;
  /** The page came over plain http: say to compare the fingerprint with the control panel's. */
  plainHttp: boolean;
  /** The server's HTTPS address, for the "then open" line. */
  issuer: string;
}

const cmd = (text: string) => `<pre><code>${escape(text)}</code></pre>`;

export function trustPageHtml(ca: LocalCa, o: TrustPageOptions): string {
  const link = (file: string, label: string) => `<a href="${escape(`${o.base}/trust/${file}`)}" download="${escape(file)}">${escape(label)}</a>`;
  const check = o.plainHttp
    ? `<p id="plain-http"><strong>This page came over plain http, which anyone on the network could alter.</strong> Before trusting the file, compare this fingerprint with the one the control panel shows (Operations › LAN TLS), or with what the device shows when it installs the certificate.</p>`
    : `<p>Check that the fingerprint the device shows when it installs the certificate is this one.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Trust Gatehouse on this device</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Trust Gatehouse on this device</h1>
<p>Gatehouse (${escape(o.issuer)}) uses its own certificate authority on this network. Install it once on each device and app server that signs in through Gatehouse; after that, its HTTPS address opens without a warning.</p>
<p>SHA-256 fingerprint:<br><code id="fingerprint">${escape(ca.fingerprintSha256)}</code></p>
<p>Valid until <time datetime="${ca.notAfter.toISOString()}">${escape(ca.notAfter.toUTCString())}</time>.</p>
${check}
<nav aria-label="Devices"><a href="#ios">iPhone, iPad and Mac</a><a href="#windows">Windows</a><a href="#linux">Linux</a><a href="#firefox">Firefox and Chromium</a><a href="#android">Android</a></nav>

<section id="ios">
<h2>iPhone, iPad and Mac</h2>
<ol>
<li>Open this page in Safari and tap ${link('gatehouse-ca.mobileconfig', 'the configuration profile (gatehouse-ca.mobileconfig)')}. Safari says the profile was downloaded.</li>
<li>Open Settings › General › VPN &amp; Device Management (or the "Profile Downloaded" line at the top of Settings), choose "Gatehouse", and tap Install.</li>
<li><strong>Then turn it on: Settings › General › About › Certificate Trust Settings, switch on "Gatehouse local CA".</strong> Until you do, iOS installs the certificate but does not trust it for websites.</li>
</ol>
<p>On a Mac, open the same profile and install it in System Settings › Privacy &amp; Security › Profiles; or, in Terminal, with ${link('gatehouse-ca.crt', 'gatehouse-ca.crt')}:</p>
${cmd('sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain gatehouse-ca.crt')}
<p>A new CA's profile replaces the old one (it has the same identifier).</p>
</section>

<section id="windows">
<h2>Windows</h2>
<p>Download ${link('gatehouse-ca.cer', 'gatehouse-ca.cer')}, then in a Command Prompt opened as administrator, in the folder holding it:</p>
${cmd(TRUST_COMMANDS.windowsCertutil)}
<p>or in PowerShell as administrator:</p>
${cmd(TRUST_COMMANDS.windowsPowerShell)}
<p>Edge and Chrome use this store at once; Firefox does once it imports the system's roots (below).</p>
</section>

<section id="linux">
<h2>Linux</h2>
<p>Download ${link('gatehouse-ca.crt', 'gatehouse-ca.crt')}. On Debian and Ubuntu:</p>
${cmd(TRUST_COMMANDS.debian)}
<p>On Fedora, Arch and other systems with p11-kit:</p>
${cmd(TRUST_COMMANDS.trustAnchor)}
<p>Programs that read the system store (curl, wget, Go, Python's ssl, PHP, most containers built on it) trust Gatehouse afterwards. Browsers keep their own store: see below.</p>
</section>

<section id="firefox">
<h2>Firefox and Chromium</h2>
<p>Firefox: give it ${link('firefox-policies.json', 'the enterprise policy (firefox-policies.json)')}, saved as <code>policies.json</code> in Firefox's <code>distribution</code> folder (Linux: <code>/etc/firefox/policies/</code>), with ${link('gatehouse-ca.crt', 'gatehouse-ca.crt')} in Firefox's certificate folder (Linux: <code>/usr/lib/mozilla/certificates/</code>). On Windows and macOS, its <code>ImportEnterpriseRoots</code> alone makes Firefox trust what the system trusts. For one Firefox profile, NSS certutil does it too (<code>-d sql:&lt;profile folder&gt;</code>).</p>
<p>Chromium and Chrome on Linux read the NSS database in your home folder (install <code>libnss3-tools</code> for certutil):</p>
${cmd(TRUST_COMMANDS.nss)}
<p>Then restart the browser.</p>
</section>

<section id="android">
<h2>Android</h2>
<p>Download ${link('gatehouse-ca.crt', 'gatehouse-ca.crt')} and install it under Settings › Security › More security settings › Encryption &amp; credentials › Install a certificate › CA certificate (the names differ a little by maker).</p>
<p><strong>The truth:</strong> since Android 7, apps ignore certificates you install yourself unless their makers opted in. Chrome trusts it; most apps (Home Assistant, Nextcloud, Immich and others) do not, and will keep refusing the connection.</p>
<p><strong>The way around it:</strong> give Gatehouse a real domain with a certificate from a public authority (GATEHOUSE_TLS=acme, through your DNS server; see docs/trust.md), which every app already trusts, so no private CA is needed. On a rooted or managed device, the CA can go into the system store instead.</p>
</section>

<section id="files">
<h2>All downloads</h2>
<ul>
<li>${link('gatehouse-ca.pem', 'gatehouse-ca.pem')} (PEM)</li>
<li>${link('gatehouse-ca.crt', 'gatehouse-ca.crt')} (PEM, for Android, Linux and Firefox)</li>
<li>${link('gatehouse-ca.cer', 'gatehouse-ca.cer')} (DER, for Windows)</li>
<li>${link('gatehouse-ca.mobileconfig', 'gatehouse-ca.mobileconfig')} (iOS, iPadOS, macOS)</li>
<li>${link('firefox-policies.json', 'firefox-policies.json')} (Firefox enterprise policy)</li>
</ul>
<p>The same in machine-readable form: <a href="${escape(`${o.base}/trust.json`)}">trust.json</a>.</p>
</section>
</main>
</body>
</html>
`;
}
