/**
 * The hosted second step (spec second-factor.md, "Sign-in", "What people see"):
 * `/sign-in/second-factor` (a TOTP code, a passkey or a recovery code) and `/sign-in/enrol`
 * (setting up a first factor when the application requires one), for the pending sign-in of the
 * `gatehouse_mfa` cookie. Forms carry the CSRF token and call the same rules as the JSON API
 * (accounts/second-factor/flow.ts); success sets the session cookie and goes on to where the
 * sign-in was headed (303), after showing new recovery codes when a factor was just enrolled.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { findApplication } from '../applications/lookup.js';
import { Problem } from '../http/problem.js';
import { checkFormToken, formToken } from '../accounts/csrf.js';
import { authRateLimits } from '../accounts/rate-limits.js';
import { clientInfo, sendSessionCookie } from '../accounts/routes.js';
import { hasSecondFactor, methodsOf } from '../accounts/second-factor/factors.js';
import {
  enrolPasskey,
  enrolTotpConfirm,
  passkeyStep,
  pendingOf,
  recoveryCodeStep,
  totpStep,
  type Completed,
} from '../accounts/second-factor/flow.js';
import { ENROL_PAGE, SECOND_FACTOR_PAGE } from '../accounts/second-factor/pending.js';
import { finishLinkIfPending } from '../accounts/providers/link-on-sign-in.js';
import { passkeySupport } from '../accounts/second-factor/rp.js';
import { pendingTotpSecret, startTotpEnrolment } from '../accounts/second-factor/service.js';
import { totpUri } from '../accounts/second-factor/totp.js';
import { preparePageScope } from './page-scope.js';
import { qrDataUri } from './qr.js';
import { renderPage } from './render.js';
import { redirectSources } from './sign-in-pages.js';
import { pageText, requestLocale, textTranslator, type Translate } from '../i18n/index.js';
import { problemText } from './text.js';
import { pageBrand } from './brand.js';
import type { Application } from '../db/schema.js';
import { PANEL_CLIENT_ID } from '../http/schemas.js';

const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const CodeForm = Type.Object({ csrf_token: short(200), code: short(64) }, { additionalProperties: false });
const PasskeyForm = Type.Object({ csrf_token: short(200), response: short(60_000), name: short(100) }, { additionalProperties: false });

/**
 * Why passkeys cannot be offered on this issuer, in the reader's words (how the operator turns
 * them on); undefined when they can.
 */
export function passkeysUnavailable(ctx: AppContext, t: Translate): string | undefined {
  const support = passkeySupport(ctx.config.issuer);
  return support.available ? undefined : t(`webauthn.unavailable.${support.reason}`, { address: support.address, example: support.example });
}

/**
 * The operator's hint (run in LAN mode, the issuer to set) is for administrators: shown on the
 * pages of the control panel's own sign-in only. Everyone else signing in to an application can
 * do nothing about it, and is told at most that passkeys are not offered.
 */
export function operatorHint(app: Pick<Application, 'id'> | undefined, unavailable: string | undefined): string | undefined {
  return app && app.id === PANEL_CLIENT_ID ? unavailable : undefined;
}

/** A TOTP secret's view for the setup forms: the QR code (SVG, made here) and the key to type. */
export function totpSetupView(secret: string, email: string) {
  return { secret, qr: qrDataUri(totpUri(secret, email)) };
}

function expiredPage(reply: FastifyReply) {
  const { t } = pageText(reply.server.ctx.config, reply.request);
  return renderPage(reply.status(401), 'message', {
    title: t('secondFactor.againTitle'),
    message: t('secondFactor.again'),
    link: { href: '/sign-in', label: t('common.signIn') },
  });
}

/** The recovery codes page; its download is a text file in the reader's words. */
export function recoveryCodesPage(reply: FastifyReply, email: string, codes: string[], next: string) {
  const t = textTranslator(requestLocale(reply.server.ctx.config, reply.request));
  const downloadText = `${t('recovery.fileHeader', { email })}\n\n${t('recovery.fileNote')}\n\n${codes.join('\n')}\n`;
  return renderPage(reply, 'recovery-codes', { title: pageText(reply.server.ctx.config, reply.request).t('recovery.title'), codes, next, downloadText });
}

/** Parses a WebAuthn answer posted by the page's script; a malformed one is a refusal in words. */
function parsedResponse(raw: string | undefined): unknown {
  try {
    return JSON.parse(raw ?? '');
  } catch {
    throw new Problem(400, 'passkey_invalid', 'The passkey answer did not arrive; try again.');
  }
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  await preparePageScope(app);
  // The same per-IP budget as the JSON second step (accounts/second-factor/routes.ts).
  const rateLimit = { max: authRateLimits(ctx.config).signIn.max, timeWindow: 60_000, groupId: 'second-factor' };

  /** The request's pending sign-in, or undefined (the page then says to sign in again). */
  async function pending(request: FastifyRequest) {
    try {
      return pendingOf(ctx, request);
    } catch {
      return undefined;
    }
  }

  /** The page of the request's pending sign-in, or the "sign in again" page. */
  async function showStep(request: FastifyRequest, reply: FastifyReply, error?: string) {
    const found = await pending(request);
    if (!found) return expiredPage(reply);
    const methods = await methodsOf(ctx.db, found.person.id);
    if (methods.length === 0) return reply.header('cache-control', 'no-store').redirect(ENROL_PAGE, 303);
    const app = found.entry.applicationId ? await findApplication(ctx.db, found.entry.applicationId) : undefined;
    const { t } = pageText(ctx.config, request);
    return renderPage(
      reply,
      'second-factor',
      {
        title: app ? t('secondFactor.titleFor', { app: app.name }) : t('secondFactor.title'),
        appName: app?.name,
        email: found.person.email,
        stepUp: Boolean(found.entry.stepUpSessionId),
        methods,
        error,
        passkeyUnavailable: passkeysUnavailable(ctx, t),
        passkeyHint: operatorHint(app, passkeysUnavailable(ctx, t)),
        csrfToken: formToken(ctx.config, request, reply),
      },
      { formActionSources: redirectSources(ctx, app), scripts: methods.includes('passkey'), brand: pageBrand(app), here: SECOND_FACTOR_PAGE },
    );
  }

  async function showEnrol(request: FastifyRequest, reply: FastifyReply, error?: string) {
    const found = await pending(request);
    if (!found) return expiredPage(reply);
    if (await hasSecondFactor(ctx.db, found.person.id)) return reply.header('cache-control', 'no-store').redirect(SECOND_FACTOR_PAGE, 303);
    const secret = (await pendingTotpSecret(ctx, found.person.id)) ?? (await startTotpEnrolment(ctx, found.person, undefined)).secret;
    const app = found.entry.applicationId ? await findApplication(ctx.db, found.entry.applicationId) : undefined;
    const { t } = pageText(ctx.config, request);
    return renderPage(
      reply,
      'enrol',
      {
        title: t('enrol.title'),
        appName: app?.name,
        email: found.person.email,
        error,
        totp: totpSetupView(secret, found.person.email),
        passkeyUnavailable: passkeysUnavailable(ctx, t),
        passkeyHint: operatorHint(app, passkeysUnavailable(ctx, t)),
        csrfToken: formToken(ctx.config, request, reply),
      },
      { scripts: true, brand: pageBrand(app), here: ENROL_PAGE },
    );
  }

  /** Signed in: the session cookie, then where the flow was headed (after what it still finishes). */
  async function finish(request: FastifyRequest, reply: FastifyReply, done: Completed): Promise<string> {
    await sendSessionCookie(ctx, reply, done.signedIn);
    return done.finishLink ? await finishLinkIfPending(ctx, request, reply, done.signedIn, done.next) : done.next;
  }

  /** Runs a second step from a form; a refusal re-renders the page with the message in words. */
  async function step(request: FastifyRequest, reply: FastifyReply, token: string | undefined, run: () => Completed | Promise<Completed>, page: typeof showStep) {
    checkFormToken(ctx.config, request, token);
    let done: Completed;
    try {
      done = await run();
    } catch (error) {
      if (!(error instanceof Problem)) throw error;
      if (error.code === 'second_factor_expired') return expiredPage(reply);
      for (const [name, value] of Object.entries(error.headers)) if (name !== 'www-authenticate') reply.header(name, value);
      const { locale, t } = pageText(ctx.config, request);
      return page(request, reply.status(error.status), problemText(t, locale, error));
    }
    const next = await finish(request, reply, done);
    if (done.recoveryCodes) return recoveryCodesPage(reply, done.signedIn.person.email, done.recoveryCodes, next);
    return reply.header('cache-control', 'no-store').redirect(next, 303);
  }

  app.get(SECOND_FACTOR_PAGE, { schema: { hide: true } }, async (request, reply) => showStep(request, reply));

  app.post(`${SECOND_FACTOR_PAGE}/totp`, { config: { rateLimit }, schema: { hide: true, body: CodeForm } }, async (request, reply) =>
    step(request, reply, request.body.csrf_token, async () => totpStep(ctx, request, reply, request.body.code ?? '', clientInfo(ctx, request)), showStep),
  );

  app.post(`${SECOND_FACTOR_PAGE}/recovery-code`, { config: { rateLimit }, schema: { hide: true, body: CodeForm } }, async (request, reply) =>
    step(request, reply, request.body.csrf_token, async () => recoveryCodeStep(ctx, request, reply, request.body.code ?? '', clientInfo(ctx, request)), showStep),
  );

  app.post(`${SECOND_FACTOR_PAGE}/passkey`, { config: { rateLimit }, schema: { hide: true, body: PasskeyForm } }, async (request, reply) =>
    step(request, reply, request.body.csrf_token, () => passkeyStep(ctx, request, reply, parsedResponse(request.body.response), clientInfo(ctx, request)), showStep),
  );

  app.get(ENROL_PAGE, { schema: { hide: true } }, async (request, reply) => showEnrol(request, reply));

  app.post(`${ENROL_PAGE}/totp`, { config: { rateLimit }, schema: { hide: true, body: CodeForm } }, async (request, reply) =>
    step(request, reply, request.body.csrf_token, async () => enrolTotpConfirm(ctx, request, reply, request.body.code ?? '', clientInfo(ctx, request)), showEnrol),
  );

  app.post(`${ENROL_PAGE}/passkey`, { config: { rateLimit }, schema: { hide: true, body: PasskeyForm } }, async (request, reply) =>
    step(
      request, reply, request.body.csrf_token,
      () => enrolPasskey(ctx, request, reply, request.body.name || 'Passkey', parsedResponse(request.body.response), clientInfo(ctx, request)),
      showEnrol,
    ),
  );
};

/** The hosted second step in its own page scope (form bodies, HTML errors). */
export const secondFactorPagesPlugin: FastifyPluginAsync = async (app) => {
  await app.register(routes);
};

