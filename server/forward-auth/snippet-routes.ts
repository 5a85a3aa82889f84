/**
 * `GET /api/admin/applications/:id/forward-auth/snippet?proxy=caddy|nginx|traefik` (spec
 * forward-auth.md, "Set-up help"): the proxy configuration for the application's protected hosts
 * (snippets.ts), for the panel's forward-auth tab and `gatehouse app show <id> --proxy …`. For
 * the application's administrators (owner, its app managers; admin-policy.ts), like the rest of
 * the set-up: an API key gets 403 `insufficient_scope`. Without `upstream` and `scheme`, those of
 * the app preset the application came from (snippetDefaults); the answer names the ones used. An
 * `upstream` that is more than a scheme, a host and a port is 400 `validation_failed` (upstream.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { getApplication } from '../applications/lookup.js';
import { conflict, validationFailed } from '../http/problem.js';
import { adminErrors, IdParams, adminSecurity as security } from '../http/schemas.js';
import { DEFAULT_UPSTREAM, PROXIES, snippet, snippetDefaults } from './snippets.js';
import { UPSTREAM_RULE, upstreamOrigin } from './upstream.js';

const SnippetQuery = Type.Object(
  {
    proxy: Type.Union(PROXIES.map((p) => Type.Literal(p)), { description: 'Which reverse proxy' }),
    upstream: Type.Optional(Type.String({
      maxLength: 300,
      description: `Where the application itself listens, as the proxy reaches it: http:// or https://, a host and an optional port, nothing more (default: the app preset's upstream, else ${DEFAULT_UPSTREAM})`,
    })),
    scheme: Type.Optional(Type.Union([Type.Literal('https'), Type.Literal('http')], { description: "How the protected hosts are served (default: as the app preset's address is, else https)" })),
  },
  { additionalProperties: false },
);

const SnippetSchema = Type.Object(
  {
    proxy: Type.String(),
    hosts: Type.Array(Type.String()),
    upstream: Type.String({ description: 'The upstream the configuration proxies to' }),
    scheme: Type.Union([Type.Literal('https'), Type.Literal('http')], { description: 'How it serves the hosts' }),
    snippet: Type.String({ description: 'The configuration text, ready to paste' }),
  },
  { additionalProperties: false },
);

export const snippetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.get(
    '/applications/:id/forward-auth/snippet',
    {
      schema: {
        tags: ['applications'], security,
        summary: 'A reverse-proxy configuration for the hosts the application protects (forward auth)',
        params: IdParams, querystring: SnippetQuery,
        response: { 200: SnippetSchema, ...adminErrors },
      },
    },
    async (request) => {
      const application = await getApplication(ctx, request.params.id);
      if (!application.forwardAuth) {
        throw conflict('forward_auth_not_enabled', `The application "${application.id}" protects no hosts; set forwardAuth.hosts first.`);
      }
      const defaults = snippetDefaults(application);
      const { proxy, upstream: given, scheme = defaults.scheme } = request.query;
      const upstream = given === undefined ? defaults.upstream : upstreamOrigin(given);
      if (!upstream) throw validationFailed([{ path: 'querystring.upstream', message: UPSTREAM_RULE }]);
      return { proxy, hosts: application.forwardAuth.hosts, upstream, scheme, snippet: snippet(proxy, application, ctx.config.issuer, { upstream, scheme }) };
    },
  );
};
