/**
 * The branding files of the hosted pages (issue 25, item 15), served from our own origin:
 *
 * - `GET /branding/:id/logo?v=` — the uploaded PNG or SVG. An SVG is only ever an image: pages
 *   show it through `<img>` (no script runs there), and opened on its own it gets
 *   `Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; sandbox` (no script,
 *   no request, a unique origin), `nosniff`, and `Content-Disposition: attachment` (a browser
 *   navigating to it downloads it instead of showing it as a document of this origin).
 * - `GET /branding/:id/theme.css?v=` — the accent colour as a stylesheet (the pages' CSP allows no
 *   inline style).
 *
 * Both carry their version in the URL, so the current one is cached for good; any other version
 * is answered with the current file and `no-cache`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { findApplication } from '../applications/lookup.js';
import { logoOf } from '../applications/branding.js';
import { notFound } from '../http/problem.js';
import { themeCss } from './brand.js';

export const LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
const Query = Type.Object({ v: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false });
const FOREVER = 'public, max-age=31536000, immutable';

export const brandRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.get('/branding/:id/logo', { schema: { hide: true, params: Params, querystring: Query } }, async (request, reply) => {
    const logo = await logoOf(ctx.db, request.params.id);
    if (!logo) throw notFound('logo_not_found', 'This application has no logo.');
    const extension = logo.contentType === 'image/png' ? 'png' : 'svg';
    return reply
      .type(logo.contentType)
      .header('content-security-policy', LOGO_CSP)
      .header('content-disposition', `attachment; filename="logo.${extension}"`)
      .header('cross-origin-resource-policy', 'same-origin')
      .header('cache-control', request.query.v === logo.version ? FOREVER : 'no-cache')
      .send(logo.data);
  });

  app.get('/branding/:id/theme.css', { schema: { hide: true, params: Params, querystring: Query } }, async (request, reply) => {
    const color = (await findApplication(ctx.db, request.params.id))?.brandAccentColor;
    if (!color) throw notFound('theme_not_found', 'This application has no accent colour.');
    return reply
      .type('text/css; charset=utf-8')
      .header('cache-control', request.query.v === color.slice(1).toLowerCase() ? FOREVER : 'no-cache')
      .send(themeCss(color));
  });
};
