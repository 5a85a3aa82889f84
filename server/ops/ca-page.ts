/**
 * The local CA over plain http (issue 25), on the `GATEHOUSE_HTTP_REDIRECT_PORT` listener that
 * otherwise only redirects to https: a device that does not trust the CA yet cannot open the
 * HTTPS port to fetch it. `GET /ca` is a small page with the CA's SHA-256 fingerprint and a link
 * to `GET /ca.pem`. Plain http can be tampered with on the way, so the page asks the person to
 * compare the fingerprint with the one the control panel shows (Operations → LAN TLS) before
 * trusting the file. No script, no style, no form: the strictest CSP.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fingerprint, tlsPaths } from './tls.js';

const HEADERS = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function caPageHtml(caFingerprint: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Gatehouse certificate authority</title>
</head>
<body>
<main>
<h1>Gatehouse certificate authority</h1>
<p>Install this certificate on the device to trust Gatehouse's HTTPS address on this network.</p>
<p><a href="/ca.pem" download="gatehouse-ca.pem">Download the CA certificate (gatehouse-ca.pem)</a></p>
<h2>Check it first</h2>
<p>This page came over plain http. Before trusting the file, compare its SHA-256 fingerprint with the one in the control panel (Operations, LAN TLS):</p>
<p><code id="fingerprint">${escape(caFingerprint)}</code></p>
</main>
</body>
</html>
`;
}

/**
 * Answers `/ca` and `/ca.pem` on the plain-http listener; false for any other request (the
 * listener redirects those to https).
 */
export function answerCaRequest(dataDir: string, request: IncomingMessage, response: ServerResponse): boolean {
  const path = (request.url ?? '/').split('?')[0];
  if (path !== '/ca' && path !== '/ca.pem') return false;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8', ...HEADERS }).end('Method not allowed.\n');
    return true;
  }
  const file = tlsPaths(dataDir).ca;
  if (!existsSync(file)) {
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...HEADERS }).end('This server has no local certificate authority.\n');
    return true;
  }
  const pem = readFileSync(file, 'utf8');
  const body =
    path === '/ca.pem'
      ? { type: 'application/x-pem-file', disposition: 'attachment; filename="gatehouse-ca.pem"', text: pem }
      : { type: 'text/html; charset=utf-8', disposition: undefined, text: caPageHtml(fingerprint(pem)) };
  response
    .writeHead(200, {
      'content-type': body.type,
      'content-length': Buffer.byteLength(body.text),
      ...(body.disposition ? { 'content-disposition': body.disposition } : {}),
      ...HEADERS,
    })
    .end(request.method === 'HEAD' ? undefined : body.text);
  return true;
}
