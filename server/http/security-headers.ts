/**
 * Headers on every response. Pages that render HTML set their own Content-Security-Policy before
 * sending; everything else (JSON) gets the strictest one.
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
const FIXED_ENTRIES = Object.entries(FIXED_HEADERS);

/** What a JSON answer carries: the fixed headers plus the strictest policy (http/early-answers.ts). */
export const JSON_SECURITY_HEADERS = { ...FIXED_HEADERS, 'content-security-policy': STRICT_CSP };

export function securityHeaders(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: Error | null, payload?: unknown) => void,
): void {
  for (const [name, value] of FIXED_ENTRIES) reply.header(name, value);
  if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', STRICT_CSP);
  done(null, payload);
}
