/**
 * The control panel: the built Solid app (renderer/dist) at `/admin/`, with a CSP that allows
 * only this origin, an SPA fallback to index.html, and `GET /api/admin/overview` for its first page.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
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

  // @fastify/static only for `reply.sendFile` (content types, ranges, ETag, 304s): with its own
  // routes it lists the root with glob at start, and glob is ~100 KB of code every start would
  // load for six files (issue 45, docs/decisions/0368-lazy-packages-at-start.md). The files are
  // listed here once instead; only a listed file is ever sent, so no path outside the root (or
  // not there at start) can be asked for.
  const files = panelFiles(root);
  const assets = join(root, 'assets', '');
  await app.register(fastifyStatic, {
    root,
    serve: false,
    index: false,
    setHeaders(res, path) {
      // Vite fingerprints everything under assets/, so those may be cached forever.
      res.header('cache-control', path.startsWith(assets) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  app.get('/admin/', { schema: { hide: true } }, async (_request, reply) => reply.sendFile('index.html'));
  // A built file; client-side routes (/admin/applications/x/...) load the same page; missing
  // assets stay 404.
  app.get<{ Params: { '*': string } }>('/admin/*', { schema: { hide: true } }, async (request, reply) => {
    const file = request.params['*'];
    if (files.has(file)) return reply.sendFile(file);
    if (file.startsWith('assets/')) return reply.callNotFound();
    return reply.sendFile('index.html');
  });
};

/**
 * The panel's built files under `root`, as paths relative to it with `/` between folders: regular
 * files only (no links), none under a dot-name (as @fastify/static's own listing left them out).
 */
function panelFiles(root: string): Set<string> {
  const files = new Set<string>();
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    const path = relative(root, join(entry.parentPath, entry.name)).split(sep).join('/');
    if (entry.isFile() && !path.split('/').some((name) => name.startsWith('.'))) files.add(path);
  }
  return files;
}

export const adminPanelPlugin: FastifyPluginAsync<FeatureOptions> = async (app) => {
  await app.register(overviewRoutes, { prefix: '/api/admin' });
  await app.register(staticRoutes);
};
