/**
 * `GET /.well-known/webfinger` (RFC 7033, OpenID Connect Discovery 1.0 §2): issuer discovery from
 * an address, which Tailscale's custom OIDC and other clients start with.
 * - `resource` is required: an `acct:` URI (`acct:user@host`, RFC 7565) or an absolute http(s)
 *   URL (Discovery §2.1 allows both); missing, repeated or malformed → 400 problem+json naming
 *   `query.resource`.
 * - The answer is `application/jrd+json` `{subject: <resource>, links: [{rel: <issuer rel>, href:
 *   <issuer>}]}`, the same for every address: one issuer serves everyone, and the answer must not
 *   tell who has an account.
 * - `rel` (repeatable) filters the links (RFC 7033 §4.3): asking only for other relations gets
 *   `links: []`.
 * - `Access-Control-Allow-Origin: *` on every answer (§5), errors included.
 */
import type { FastifyPluginAsync, onSendHookHandler } from 'fastify';
import { validationFailed } from '../http/problem.js';
import { CORS_HEADERS } from './cors.js';

export const WEBFINGER_PATH = '/.well-known/webfinger';
export const ISSUER_REL = 'http://openid.net/specs/connect/1.0/issuer';

const MAX_RESOURCE = 1024;

/** Whether `resource` is an address WebFinger answers for: `acct:local@host` or an absolute http(s) URL. */
export function isWebFingerResource(resource: string): boolean {
  if (resource.length > MAX_RESOURCE || /[\s\x00-\x1f\x7f]/.test(resource)) return false;
  if (resource.startsWith('acct:')) {
    const address = resource.slice('acct:'.length);
    const at = address.lastIndexOf('@');
    return at > 0 && at < address.length - 1 && !address.slice(at + 1).includes('/');
  }
  try {
    const url = new URL(resource);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const resourceProblem = (message: string) => validationFailed([{ path: 'query.resource', message }], 'The WebFinger request is not valid.');

const cors: onSendHookHandler = (_request, reply, payload, done) => {
  reply.headers(CORS_HEADERS);
  done(null, payload);
};

export const webfingerRoutes: FastifyPluginAsync = async (app) => {
  const { ctx } = app;
  app.get(WEBFINGER_PATH, { schema: { hide: true }, onSend: cors }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const resource = query.resource;
    if (resource === undefined || resource === '') throw resourceProblem('is required');
    if (typeof resource !== 'string') throw resourceProblem('must be given once');
    if (!isWebFingerResource(resource)) throw resourceProblem('must be an acct: URI (acct:user@host) or an absolute http(s) URL');
    const rel = query.rel === undefined ? undefined : ([] as unknown[]).concat(query.rel);
    const links = rel === undefined || rel.includes(ISSUER_REL) ? [{ rel: ISSUER_REL, href: ctx.config.issuer }] : [];
    return reply.type('application/jrd+json').header('cache-control', 'public, max-age=300').send(JSON.stringify({ subject: resource, links }));
  });
};
