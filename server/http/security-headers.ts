/**
 * Headers on every response. Pages that render HTML set their own Content-Security-Policy before
 * sending; everything else (JSON) gets the strictest one.
 *
 * Runs on every request, so it is a callback hook (no promise per response) that sets the
 * fixed headers straight into the reply.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export const STRICT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function securityHeaders(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: Error | null, payload?: unknown) => void,
): void {
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
  if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', STRICT_CSP);
  done(null, payload);
}
