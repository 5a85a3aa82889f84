/**
 * RFC 6749 §5.2 errors as values, and the error handler of the OAuth scope: every failure on the
 * token, revocation and userinfo endpoints answers `{error, error_description}` with
 * `Cache-Control: no-store`; anything unexpected is a bare `server_error` (DESIGN §4.1).
 */
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { JSON_TYPE, type JsonAnswer } from '../http/early-answers.js';
import { isUnstorableText } from '../http/problem.js';

/**
 * RFC 6749 §5.2 allows only %x20-21 / %x23-5B / %x5D-7E in `error_description`; descriptions
 * may quote client input or application names, so anything else is replaced here, once.
 */
export function oauthText(text: string): string {
  return text.replaceAll('"', "'").replaceAll('\\', '/').replace(/[^\x20-\x7e]/g, '?');
}

export class OAuthError extends Error {
  readonly description: string;

  constructor(
    readonly error: string,
    description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    const text = oauthText(description);
    super(text);
    this.description = text;
  }
}

export const invalidRequest = (description: string) => new OAuthError('invalid_request', description);
export const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);
export const invalidScope = (description: string) => new OAuthError('invalid_scope', description);
export const invalidTarget = (description: string) => new OAuthError('invalid_target', description);
/** RFC 6749 §5.2: 401 with a Basic challenge, whichever method the client tried. */
/**
 * A failed client authentication: 401, with a `WWW-Authenticate: Basic` challenge only when the
 * client used Basic (RFC 6749 §5.2 asks for it then). Sent to a browser that did not, the
 * challenge would open the browser's own credentials dialog (issue 33: the panel's Test sign-in).
 */
export const invalidClient = (description: string, usedBasic = false) =>
  new OAuthError('invalid_client', description, 401, usedBasic ? { 'www-authenticate': 'Basic realm="gatehouse"' } : {});

/** The answer of a failure (status, RFC 6749 body, `Cache-Control: no-store`), as data for either transport. */
export function oauthErrorAnswer(error: OAuthError): JsonAnswer {
  return {
    status: error.status,
    headers: { ...error.headers, 'cache-control': 'no-store', pragma: 'no-cache' },
    body: JSON.stringify({ error: error.error, error_description: error.description }),
  };
}

/**
 * What anything thrown by an OAuth endpoint answers: its own OAuthError; Fastify's client errors
 * (wrong content type, oversize body) as `invalid_request`; anything else logged and a bare
 * `server_error` (DESIGN §4.1). The scope's error handler and the early answers share it.
 */
export function failureAnswer(error: unknown, log: FastifyBaseLogger): JsonAnswer {
  return oauthErrorAnswer(oauthFailure(error, log));
}

/** The OAuth error anything thrown by an OAuth endpoint stands for (see `failureAnswer`). */
export function oauthFailure(error: unknown, log: FastifyBaseLogger): OAuthError {
  if (error instanceof OAuthError) return error;
  if (isUnstorableText(error)) return invalidRequest('A parameter contains the NUL character (U+0000).');
  const status = (error as Partial<FastifyError>)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const description =
      (error as FastifyError).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? 'The request body must be application/x-www-form-urlencoded.'
        : 'The request cannot be processed.';
    return invalidRequest(description);
  }
  log.error({ err: error }, 'unhandled error in the OAuth scope');
  return new OAuthError('server_error', 'Something went wrong on our side.', 500);
}

/** Sends a computed answer through Fastify: the same bytes the early path writes (http/early-answers.ts). */
export function sendJsonAnswer(reply: FastifyReply, answer: JsonAnswer): FastifyReply {
  return reply.status(answer.status).headers(answer.headers).type(JSON_TYPE).send(answer.body);
}

export function sendOAuthError(reply: FastifyReply, error: OAuthError): FastifyReply {
  return sendJsonAnswer(reply, oauthErrorAnswer(error));
}

/** The OAuth scope's error handler (Fastify's own client errors, anything a route threw). */
export function oauthErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  return sendJsonAnswer(reply, failureAnswer(error, request.log));
}
