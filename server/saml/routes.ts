/**
 * The identity provider's endpoints (spec saml.md): `GET /saml/metadata`
 * (`application/samlmetadata+xml`), `GET|POST /saml/sso` (HTTP-Redirect, HTTP-POST),
 * `GET /saml/sso/continue` (back from the hosted pages), `GET /saml/sso/init` (IdP-initiated) and
 * `GET|POST /saml/slo`. Browsers navigate to all but the metadata, so every refusal there is the
 * hosted page in the reader's language, audited `saml.refused` with its reason (never the XML)
 * and counted; a body Fastify refuses (too large, not a form) is such a refusal too. Form bodies
 * may be up to 1 MiB here (a 256 KiB message, base64 and percent-encoded), not the hosted pages'
 * 16 KiB. The metadata is an API: its errors are problem+json.
 */
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit } from '../audit/record.js';
import { notFound } from '../http/problem.js';
import { errorPageHandler } from '../oauth/error-page.js';
import { param, type RawParams } from '../oauth/params.js';
import type { MessageParam } from './bindings.js';
import { CONTINUE_PATH, idpEntityId, INIT_PATH, METADATA_PATH, SLO_PATH, SSO_PATH } from './paths.js';
import { findApplication } from './queries.js';
import { SamlRefusal } from './refusal.js';
import { sendRefusal } from './pages.js';
import type { SamlService } from './sso.js';

/** SAML's protocol code (messages, bindings, signatures), loaded on the first SAML request (issue 45, decision 0369). */
const protocol = () => import('./protocol.js');

export const METADATA_TYPE = 'application/samlmetadata+xml';
const BODY_LIMIT = 1024 * 1024;
/** How long the metadata may be cached (its `cacheDuration` says the same). */
const METADATA_MAX_AGE_SECONDS = 3600;

function single(query: unknown, name: string): string | undefined {
  try {
    return param(query as RawParams, name);
  } catch {
    throw new SamlRefusal('bad_binding', `${name} appears more than once`);
  }
}

/** The metadata, as an API (problem+json errors). */
export const metadataRoute: FastifyPluginAsync<{ svc: SamlService }> = async (app, { svc }) => {
  const { ctx } = svc;
  app.get(METADATA_PATH, { schema: { hide: true } }, async (request, reply) => {
    const appId = (request.query as Record<string, unknown>).app;
    let want = false;
    if (appId !== undefined) {
      const sp = typeof appId === 'string' ? await findApplication(ctx.db, appId) : undefined;
      if (!sp?.saml) throw notFound('application_not_found', 'There is no SAML application with this id.');
      want = sp.saml.wantAuthnRequestsSigned;
    }
    const keys = await svc.keys.current();
    const { idpMetadataXml } = await protocol();
    return reply
      .header('cache-control', `public, max-age=${METADATA_MAX_AGE_SECONDS}`)
      .type(METADATA_TYPE)
      .send(idpMetadataXml({
        entityId: idpEntityId(ctx.config.issuer), certificates: keys.published, ssoUrl: `${ctx.config.issuer}${SSO_PATH}`,
        sloUrl: `${ctx.config.issuer}${SLO_PATH}`, wantAuthnRequestsSigned: want, cacheDuration: `PT${METADATA_MAX_AGE_SECONDS}S`,
      }));
  });
};

/** The browser endpoints, in a scope of their own (form bodies up to 1 MiB, the refusal page). */
export const browserRoutes: FastifyPluginAsync<{ svc: SamlService }> = async (app, { svc }) => {
  const { ctx } = svc;
  await app.register(formbody, { bodyLimit: BODY_LIMIT });

  app.setErrorHandler(async (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    let refusal = error instanceof SamlRefusal ? error : undefined;
    const status = (error as Partial<FastifyError>)?.statusCode;
    if (!refusal && typeof status === 'number' && status >= 400 && status < 500) {
      refusal = status === 413 ? new SamlRefusal('too_large', 'the body is too large') : new SamlRefusal('bad_binding', `the request was refused before it was read (HTTP ${status})`);
    }
    if (!refusal) return errorPageHandler(error, request, reply);
    svc.count('refused');
    const now = ctx.clock.now();
    await recordAudit(ctx.db, now, {
      actor: 'anonymous', action: 'saml.refused', applicationId: refusal.app?.id ?? null, target: refusal.app?.samlEntityId ?? null,
      details: { reason: refusal.reason, detail: refusal.detail, path: request.url.split('?')[0]!.slice(0, 100) },
    });
    return sendRefusal(reply, refusal, refusal.app);
  });

  const postParam = (body: unknown): MessageParam => ((body as Record<string, unknown> | undefined)?.SAMLResponse !== undefined ? 'SAMLResponse' : 'SAMLRequest');

  app.get(SSO_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { fromRedirect, receiveAuthnRequest } = await protocol();
    return receiveAuthnRequest(svc, request, reply, fromRedirect(request.url, 'SAMLRequest'));
  });
  app.post(SSO_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { fromPost, receiveAuthnRequest } = await protocol();
    return receiveAuthnRequest(svc, request, reply, fromPost(request.body, 'SAMLRequest'));
  });
  app.get(CONTINUE_PATH, { schema: { hide: true } }, async (request, reply) => {
    const handle = single(request.query, 'r');
    return (await protocol()).continueRequest(svc, request, reply, handle);
  });
  app.get(INIT_PATH, { schema: { hide: true } }, async (request, reply) => {
    const relayState = single(request.query, 'RelayState');
    if (relayState !== undefined && Buffer.byteLength(relayState) > 80) throw new SamlRefusal('relay_state_too_long', 'RelayState is longer than 80 bytes');
    const appId = single(request.query, 'app');
    return (await protocol()).initiate(svc, request, reply, appId, relayState);
  });
  app.get(SLO_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { fromRedirect, rawQuery, receiveSlo } = await protocol();
    const param: MessageParam = rawQuery(request.url).has('SAMLResponse') ? 'SAMLResponse' : 'SAMLRequest';
    return receiveSlo(svc, request, reply, fromRedirect(request.url, param));
  });
  app.post(SLO_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { fromPost, receiveSlo } = await protocol();
    return receiveSlo(svc, request, reply, fromPost(request.body, postParam(request.body)));
  });
};
