/**
 * Headers on every response. Pages that render HTML set their own Content-Security-Policy before
 * sending; everything else (JSON) gets the strictest one. A server that speaks TLS itself also
 * sends HSTS (RFC 6797 §7.2: never over plain http, where an attacker could strip or forge it).
 *
 * Runs on every request, so it is a callback hook (no promise per response) that sets the
 * fixed headers straight into the reply.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export const STRICT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The headers every response gets, whatever it carries. */
const FIXED_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** One year, no `includeSubDomains`: a LAN appliance must not pin HTTPS on sibling hosts it does not serve. */
export const HSTS_HEADERS = { 'strict-transport-security': 'max-age=31536000' };

/** What a JSON answer carries: the fixed headers plus the strictest policy (http/early-answers.ts). */
export const JSON_SECURITY_HEADERS = { ...FIXED_HEADERS, 'content-security-policy': STRICT_CSP };

/** Sets the security headers of one server (`tls`: it serves HTTPS itself) on replies. */
export function securityHeaders(tls: boolean) {
  const entries = Object.entries(tls ? { ...FIXED_HEADERS, ...HSTS_HEADERS } : FIXED_HEADERS);
  /** Sets them on `reply`; an answer that set its own CSP keeps it. */
  const apply = (reply: FastifyReply): void => {
    for (const [name, value] of entries) reply.header(name, value);
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', STRICT_CSP);
  };
  const onSend = (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void): void => {
    apply(reply);
    done(null, payload);
  };
  return { apply, onSend };
}
