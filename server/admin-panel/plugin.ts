/**
 * The control panel: the built Solid app (renderer/dist) at `/admin/`, with a CSP that allows
 * only this origin, an SPA fallback to index.html, and `GET /api/admin/overview` for its first page.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fastifyStatic from '@fastify/static';
import { Type } from 'typebox';
import type { FeatureOptions } from '../context.js';
import { requireAdmin } from '../http/admin-auth.js';
import { adminErrors } from '../http/schemas.js';
import { overview } from './overview.js';
import { rendererDir } from './paths.js';

export const PANEL_CSP =
  "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const CoreOverview = {
  version: Type.String(),
  issuer: Type.String(),
  uptimeSeconds: Type.Integer(),
  counts: Type.Object(
    {
      applications: Type.Integer(),
      people: Type.Integer(),
      memberships: Type.Integer(),
      pendingInvitations: Type.Integer(),
      ssoGroups: Type.Integer(),
    },
    { additionalProperties: false },
  ),
  signingKey: Type.Union([Type.String(), Type.Null()]),
  discoveryUrl: Type.String(),
  jwksUrl: Type.String(),
  caCertificateUrl: Type.Union([Type.String(), Type.Null()]),
};

const overviewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const startedAt = app.ctx.clock.now();
  // The core's fields, then each plugin's part (the LDAP directory's listener).
  const sections = Object.fromEntries(app.ctx.registries.overviewSections.all.map((section) => [section.name, section.schema]));
  const OverviewSchema = Type.Object({ ...CoreOverview, ...sections }, { additionalProperties: false });
  app.addHook('onRequest', requireAdmin);
  app.get(
    '/overview',
    {
      schema: {
        tags: ['admin-panel'],
        security: [{ adminToken: [] }],
        summary: 'Installation overview for the control panel',
        response: { 200: OverviewSchema, ...adminErrors },
      },
    },
    async () => overview(app.ctx, startedAt),
  );
};

const staticRoutes: FastifyPluginAsync = async (app) => {
  const root = rendererDir();
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('content-security-policy', PANEL_CSP);
  });
  app.get('/admin', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/admin/', 301));

  if (!existsSync(join(root, 'index.html'))) {
    // A checkout that never ran `npm run build:renderer`: say so instead of a bare 404.
    app.get('/admin/*', { schema: { hide: true } }, async (_request, reply) =>
      reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The control panel has not been built. Run `npm run build:renderer` and restart.'),
    );
    return;
  }

  await app.register(fastifyStatic, {
    root,
    prefix: '/admin/',
    // Files are listed once at start-up; unknown paths fall through to the SPA route below.
    wildcard: false,
    index: false,
    setHeaders(res, path) {
      // Vite fingerprints everything under assets/, so those may be cached forever.
      res.header('cache-control', path.includes(`${join('assets', '')}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  const sendIndex = async (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply.header('cache-control', 'no-cache').sendFile('index.html');
  app.get('/admin/', { schema: { hide: true } }, sendIndex);
  // Client-side routes (/admin/applications/x/...) load the same page; missing assets stay 404.
  app.get('/admin/*', { schema: { hide: true } }, async (request, reply) => {
    if (request.url.startsWith('/admin/assets/')) return reply.callNotFound();
    return sendIndex(request, reply);
  });
};

export const adminPanelPlugin: FastifyPluginAsync<FeatureOptions> = async (app) => {
  await app.register(overviewRoutes, { prefix: '/api/admin' });
  await app.register(staticRoutes);
};
