/**
 * LAN trust (spec lan-trust.md; issue 46): the trust page and its downloads on the HTTPS port
 * (the plain-http port answers the same through plain-http.ts, from main.ts), the QR code of the
 * page for the panel's LAN TLS screen, and the trust lines of every set-up text. A plugin: the
 * core reaches it only through `ctx.lanTrust` (http/lan-trust-wire.ts), which it fills here.
 *
 * Only certificates leave these routes: nothing here reads a key.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { renderSVG } from 'uqr';
import type { AppContext, FeatureOptions } from '../context.js';
import { requireAdmin } from '../http/admin-auth.js';
import { conflict, notFound, sendProblem } from '../http/problem.js';
import { actorName } from '../http/admin-auth.js';
import { recordAudit } from '../audit/record.js';
import type { AcmeManager } from './acme/manager.js';
import { adminErrors, adminSecurity as security, NoQuery } from '../http/schemas.js';
import { AcmeStatusSchema, type LanTrustHooks } from '../http/lan-trust-wire.js';
import { trustAnswer } from './answer.js';
import { plainHttpBase, readLocalCa } from './local-ca.js';
import { setupTrust } from './setup-trust.js';

const tags = ['operations'];

/** The hooks the core calls (`ctx.lanTrust`). */
export function lanTrustHooks(ctx: AppContext, manager?: AcmeManager): LanTrustHooks {
  return {
    acme: () => manager?.status() ?? null,
    acmeCertificate: () => manager?.current()?.cert ?? null,
    link() {
      const ca = readLocalCa(ctx.config);
      if (!ca) return null;
      const plain = plainHttpBase(ctx.config);
      return { url: `${ctx.config.issuer.replace(/\/$/, '')}/trust`, plainHttpUrl: plain ? `${plain}/trust` : null, fingerprintSha256: ca.fingerprintSha256 };
    },
    setup(runtime, caPath) {
      const ca = readLocalCa(ctx.config);
      // Without a local-CA certificate serving (an ACME one does), apps need no private CA.
      if (!ca || manager?.current()) return null;
      return setupTrust(ca, `${ctx.config.issuer.replace(/\/$/, '')}/trust/gatehouse-ca.pem`, runtime, caPath);
    },
  };
}

const adminTrustRoutes: FastifyPluginAsyncTypebox<{ manager: AcmeManager | undefined }> = async (app, { manager }) => {
  const { ctx } = app;
  app.addHook('onRequest', requireAdmin);
  app.post(
    '/tls/acme/renew',
    {
      schema: {
        tags, security, summary: 'Ask the ACME server for a certificate now (GATEHOUSE_TLS=acme); poll GET /api/admin/tls for acme.status',
        querystring: NoQuery,
        response: { 202: AcmeStatusSchema, ...adminErrors, 409: Type.Ref('Problem', { description: '`tls_not_acme`: GATEHOUSE_TLS is not acme' }) },
      },
    },
    async (request, reply) => {
      if (!manager) throw conflict('tls_not_acme', 'This server does not get its certificate by ACME (GATEHOUSE_TLS is not acme).');
      void manager.renewNow();
      await recordAudit(ctx.db, ctx.clock.now(), { actor: actorName(request.actor), action: 'tls.acme_renew_requested', details: { domains: manager.status().domains } });
      return reply.status(202).header('location', '/api/admin/tls').send(manager.status());
    },
  );
  app.get(
    '/tls/trust-qr.svg',
    {
      schema: {
        tags, security, summary: 'A QR code of the trust page (trust.url of GET /api/admin/tls), for phones to scan',
        querystring: NoQuery,
        produces: ['image/svg+xml'],
        response: { 200: Type.String({ description: 'image/svg+xml' }), ...adminErrors },
      },
    },
    async (_request, reply) => {
      const link = ctx.lanTrust.link();
      if (!link) throw notFound('ca_not_found', 'This server has no local certificate authority.');
      return reply
        .type('image/svg+xml')
        .header('cache-control', 'no-cache')
        .send(renderSVG(link.url, { ecc: 'M', border: 2, pixelSize: 6 }));
    },
  );
};

export const trustPlugin: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
  const { ctx } = app;
  const { tls } = ctx.config;
  const manager =
    tls.mode === 'acme' && ctx.config.dataDir !== ':memory:'
      ? // The ACME client (manager, RFC 2136 updates, TSIG) is loaded only when GATEHOUSE_TLS=acme (decision 0369).
        new (await import('./acme/manager.js')).AcmeManager({ config: ctx.config, acme: tls.acme, clock: ctx.clock, log: app.log, serve: (material) => ctx.serveCertificate(material) })
      : undefined;
  ctx.lanTrust = lanTrustHooks(ctx, manager);
  if (manager && options.startWorkers) {
    app.addHook('onReady', async () => manager.start());
    app.addHook('onClose', async () => manager.stop());
  }

  const answer = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    const found = trustAnswer(ctx.config, path, 'https');
    // Problem details, as /ca.pem answers: devices and scripts fetch these more than people open them.
    if (!found && !readLocalCa(ctx.config)) return sendProblem(reply, notFound('ca_not_found', 'This server has no local certificate authority.'));
    if (!found) return sendProblem(reply, notFound('route_not_found', `No route for GET ${path}.`));
    return reply.headers(found.headers).send(found.body);
  };
  app.get('/trust', { schema: { hide: true } }, answer);
  app.get('/trust.json', { schema: { hide: true } }, answer);
  app.get('/trust/*', { schema: { hide: true } }, answer);

  await app.register(adminTrustRoutes, { prefix: '/api/admin', manager });
};
