/**
 * RFC 6749 §5.2 errors as values, and the error handler of the OAuth scope: every failure on the
 * token, revocation and userinfo endpoints answers `{error, error_description}` with
 * `Cache-Control: no-store`; anything unexpected is a bare `server_error` (DESIGN §4.1).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

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
export const invalidClient = (description: string) =>
  new OAuthError('invalid_client', description, 401, { 'www-authenticate': 'Basic realm="gatehouse"' });

export function sendOAuthError(reply: FastifyReply, error: OAuthError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .status(error.status)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .send({ error: error.error, error_description: error.description });
}

/** Maps Fastify's own client errors (wrong content type, oversize body) onto `invalid_request`. */
export function oauthErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof OAuthError) return sendOAuthError(reply, error);
  const status = (error as Partial<FastifyError>)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const description =
      (error as FastifyError).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? 'The request body must be application/x-www-form-urlencoded.'
        : 'The request cannot be processed.';
    return sendOAuthError(reply, invalidRequest(description));
  }
  request.log.error({ err: error }, 'unhandled error in the OAuth scope');
  return sendOAuthError(reply, new OAuthError('server_error', 'Something went wrong on our side.', 500));
}
