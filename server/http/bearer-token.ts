/** The bearer token of a request (RFC 6750 §2.1): the admin API, the OAuth resource endpoints and /metrics read it. */
import type { FastifyRequest } from 'fastify';

/** Reads `Authorization: Bearer <token>`; undefined when absent or of another scheme. */
export function bearerToken(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ ]+([\x21-\x7e]+)[ ]*$/i.exec(header);
  return match?.[1];
}
