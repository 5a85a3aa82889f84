/**
 * The page shown when an authorization request cannot be answered by redirect (unknown client,
 * missing or unregistered `redirect_uri`): redirecting there would make us an open redirector
 * (RFC 6749 §4.1.2.1). Every value is HTML-escaped.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Problem } from '../http/problem.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export function sendErrorPage(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in error · Gatehouse</title></head>
<body><main><h1>This sign-in request cannot continue</h1>
<p>${escapeHtml(description)}</p>
<p>Error code: <code>${escapeHtml(error)}</code></p>
<p>Go back to the application you came from and try again. If this keeps happening, tell its administrator.</p>
</main></body></html>`;
  return reply.status(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
}

/**
 * Error handler for the front-channel endpoints (authorize, end-session): a browser navigated
 * here, so a body or content type Fastify refuses is answered with this page, not RFC 6749 JSON.
 */
export function errorPageHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // Our own refusals (the sign-out form's CSRF check) keep their status, code and sentence.
  if (error instanceof Problem && error.status < 500) return sendErrorPage(reply, error.status, error.code, error.detail);
  const status = (error as Partial<FastifyError>)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return sendErrorPage(reply, status, 'invalid_request', 'The request cannot be processed.');
  }
  request.log.error({ err: error }, 'unhandled error on a front-channel OAuth endpoint');
  return sendErrorPage(reply, 500, 'server_error', 'Something went wrong on our side.');
}
