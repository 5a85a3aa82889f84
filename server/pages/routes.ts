/**
 * Hosted pages (DESIGN §4.8, §5): `GET/POST /sign-in`, `GET/POST /sign-up` and the page
 * stylesheet. Forms post back here with a double-submit CSRF token and share the sign-in rules,
 * rate limits and back-off of the JSON endpoints; success answers 303 to `return_to`.
 * Errors in this scope render as HTML pages, not problem+json.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext, FeatureOptions } from '../context.js';
import { Problem } from '../http/problem.js';
import { checkFormToken, formToken } from '../accounts/csrf.js';
import { authRateLimits } from '../accounts/rate-limits.js';
import { clientInfo, sendSessionCookie } from '../accounts/routes.js';
import { readSession } from '../accounts/session.js';
import { LOCK_AFTER_FAILURES, SignInLocked, WrongPassword, lockDuration, needsSecondFactor, signInWithPassword } from '../accounts/sign-in.js';
import { redirectToSecondStep } from '../accounts/second-factor/pending.js';
import { signUpWithEmail } from '../accounts/sign-up.js';
import { sendVerificationEmail } from '../accounts/email-verification.js';
import { mailerFor } from '../mail/mailer.js';
import { PAGE_SCRIPT_PATH, localPath, pagesFolder, renderError, renderPage } from './render.js';
import type { Application } from '../db/schema.js';
import { isLocale, pageText, setLanguageCookie, type Translate } from '../i18n/index.js';
import { errorTitle, problemText } from './text.js';
import { pageBrand } from './brand.js';
import { brandRoutes } from './brand-routes.js';
import { operatorHint, passkeysUnavailable, secondFactorPagesPlugin } from './second-factor-pages.js';
import { installPath } from '../util/install-paths.js';
import { preparePageScope } from './page-scope.js';
import {
  DEFAULT_RETURN_TO,
  emailAllowed,
  flowQuery,
  linkedProviderLinks,
  pageApplication,
  providerLinks,
  redirectSources,
  rememberResume,
  safeReturnTo,
  signUpOpen,
} from './sign-in-pages.js';

const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const FlowQuery = Type.Object(
  { client_id: short(200), return_to: short(4000), switch: Type.Optional(Type.Literal('1')), reauth: Type.Optional(Type.Literal('1')) },
  { additionalProperties: false },
);
const SignInForm = Type.Object(
  { csrf_token: short(200), client_id: short(200), return_to: short(4000), email: short(254), password: short(256) },
  { additionalProperties: false },
);
const SignUpForm = Type.Object(
  {
    csrf_token: short(200), client_id: short(200), return_to: short(4000), invitation_token: short(200),
    name: short(200), email: short(254), password: short(1000),
  },
  { additionalProperties: false },
);

/** A refusal of a sign-in or sign-up form, as the page shows it: the message and what it says of the back-off. */
interface Refusal {
  status: number;
  message?: string | undefined;
  /** The address is locked: for how long (the page counts down). */
  lockedUntil?: Date | undefined;
  /** The wrong passwords so far (the page warns on the attempt before the lock). */
  failures?: number | undefined;
}

/** Re-shows a form with a message when a sign-in rule refuses, keeping the problem's status and headers. */
function refusal(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, error: unknown): Refusal {
  if (!(error instanceof Problem)) throw error;
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  if (error instanceof SignInLocked) return { status: error.status, lockedUntil: error.lockedUntil };
  const { locale, t } = pageText(ctx.config, request);
  const message = problemText(t, locale, error);
  if (error instanceof WrongPassword) {
    // The wrong password that set the lock says so at once, with the wait (which says it all).
    if (error.lockedUntil) return { status: error.status, lockedUntil: error.lockedUntil };
    return { status: error.status, message, failures: error.failures };
  }
  return { status: error.status, message };
}

interface SignInView {
  clientId?: string | undefined;
  returnTo?: string | undefined;
  switchAccount?: boolean;
  /** Sent here by an action that needs a recent sign-in (pages/page-scope.ts, REAUTH_URL). */
  reauth?: boolean;
  email?: string;
  refused?: Refusal;
}

/** The count-down of a lock, in the reader's words (the page's module updates it every second). */
function lockView(t: Translate, lockedUntil: Date, now: Date) {
  const seconds = Math.max(1, Math.ceil((lockedUntil.getTime() - now.getTime()) / 1000));
  return {
    seconds,
    text: t('signIn.locked', { count: seconds }),
    one: t('signIn.locked_one', { count: '#' }),
    other: t('signIn.locked_other', { count: '#' }),
    done: t('signIn.lockOver'),
  };
}

/** What the sign-in page says up front about who may join the application. */
function policyNote(t: Translate, app: Application | undefined): string | undefined {
  if (!app) return undefined;
  if (app.authPolicy.signup_policy === 'invite_only') return t('signIn.inviteOnly', { app: app.name });
  if (app.authPolicy.signup_policy === 'closed') return t('signIn.closed', { app: app.name });
  return undefined;
}

async function showSignIn(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, view: SignInView) {
  const app = await pageApplication(ctx, view.clientId);
  const returnTo = safeReturnTo(ctx, view.returnTo);
  const current = view.switchAccount ? undefined : await readSession(ctx, request);
  const { t } = pageText(ctx.config, request);
  // Signing in again for the account page: the person's own providers are as good as the password.
  const reauth = view.reauth && current && !app ? current.person : undefined;
  const unavailable = passkeysUnavailable(ctx, t);
  const refused = view.refused;
  const warn = refused?.failures === LOCK_AFTER_FAILURES - 1;
  rememberResume(ctx.config, reply, app, returnTo);
  return renderPage(reply, 'sign-in', {
    title: app ? t('signIn.titleFor', { app: app.name }) : t('signIn.title'),
    appName: app?.name,
    clientId: app?.id ?? '',
    returnTo,
    csrfToken: formToken(ctx.config, request, reply),
    error: refused?.message,
    lock: refused?.lockedUntil ? lockView(t, refused.lockedUntil, ctx.clock.now()) : undefined,
    warning: warn ? t('signIn.lastAttempt', { seconds: lockDuration(LOCK_AFTER_FAILURES) / 1000 }) : undefined,
    // After a refusal the address is filled in: the password is what to type again.
    focusPassword: Boolean(refused && view.email),
    notice: reauth ? t('signIn.reauth') : undefined,
    policyNote: policyNote(t, app),
    email: view.email ?? '',
    continueAs:
      current && emailAllowed(app) && current.person.passwordHash
        ? { email: current.person.email, label: current.person.name ?? current.person.email }
        : undefined,
    switchHref: `/sign-in?${flowQuery(app, returnTo, { switch: '1' })}`,
    emailAllowed: emailAllowed(app),
    providers: reauth ? await linkedProviderLinks(ctx, reauth.id) : providerLinks(ctx, app, returnTo),
    signUpHref: signUpOpen(app) ? `/sign-up?${flowQuery(app, returnTo)}` : undefined,
    // "Forgot password?" always: the reset page when mail can be sent, else who to ask.
    forgotHref: mailerFor(ctx.config) ? `/forgot-password${app || returnTo !== DEFAULT_RETURN_TO ? `?${flowQuery(app, returnTo)}` : ''}` : undefined,
    // Passkey-first sign-in (and autofill) where the issuer can offer passkeys; otherwise why not.
    passkey: !unavailable && emailAllowed(app),
    passkeyUnavailable: unavailable,
    passkeyHint: operatorHint(app, unavailable),
  }, {
    formActionSources: redirectSources(ctx, app),
    scripts: !unavailable && emailAllowed(app),
    pageModule: Boolean(refused?.lockedUntil),
    brand: pageBrand(app),
    here: `/sign-in?${flowQuery(app, returnTo, view.switchAccount ? { switch: '1' } : {})}`,
  });
}

interface SignUpView {
  clientId?: string | undefined;
  returnTo?: string | undefined;
  invitationToken?: string | undefined;
  email?: string | undefined;
  name?: string | undefined;
  error?: string | undefined;
}

/** Renders the sign-up form; the invitation page reuses it with `invitationToken` and a fixed e-mail. */
export async function showSignUp(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, view: SignUpView) {
  const app = await pageApplication(ctx, view.clientId);
  const { t } = pageText(ctx.config, request);
  if (!view.invitationToken && !signUpOpen(app)) {
    return renderError(reply.status(403), 403, t('signUp.closedTitle'), t('signUp.closedMessage'), { brand: pageBrand(app) });
  }
  const returnTo = safeReturnTo(ctx, view.returnTo);
  return renderPage(reply, 'sign-up', {
    title: app ? t('signUp.titleFor', { app: app.name }) : t('signUp.title'),
    appName: app?.name,
    clientId: app?.id ?? '',
    returnTo,
    invitationToken: view.invitationToken,
    emailLocked: Boolean(view.invitationToken && view.email),
    csrfToken: formToken(ctx.config, request, reply),
    error: view.error,
    email: view.email ?? '',
    name: view.name ?? '',
    signInHref: `/sign-in?${flowQuery(app, returnTo)}`,
  }, { formActionSources: redirectSources(ctx, app), pageModule: true, brand: pageBrand(app), here: `/sign-up?${flowQuery(app, returnTo)}` });
}

const pageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const limits = authRateLimits(ctx.config);
  await preparePageScope(app);

  const css = readFileSync(join(pagesFolder('assets'), 'gatehouse.css'));
  app.get('/assets/gatehouse.css', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css),
  );

  // Built by scripts/bundle-server.mjs into dist/pages/; read on first request.
  let script: Buffer | undefined;
  app.get(PAGE_SCRIPT_PATH, { schema: { hide: true } }, async (_request, reply) => {
    script ??= readFileSync(installPath('dist', 'pages', 'webauthn.js'));
    return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(script);
  });

  // The pages' module and its lazily loaded chunks (dist/pages/js/), by exact file name only.
  const modules = new Map<string, Buffer>();
  const ModuleParams = Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9_-]{1,80}\\.js$' }) });
  app.get('/assets/js/:file', { schema: { hide: true, params: ModuleParams } }, async (request, reply) => {
    const { file } = request.params;
    let body = modules.get(file);
    if (!body) {
      const path = installPath('dist', 'pages', 'js', file);
      if (!existsSync(path)) return renderError(reply, 404, errorTitle(pageText(ctx.config, request).t, 404), pageText(ctx.config, request).t('errors.notFound'));
      modules.set(file, (body = readFileSync(path)));
    }
    // Chunks carry their content hash in the name; the entry does not.
    const cache = file.startsWith('chunk-') ? 'public, max-age=31536000, immutable' : 'public, max-age=3600';
    return reply.type('text/javascript; charset=utf-8').header('cache-control', cache).send(body);
  });

  // The language switch (every page's footer): the choice is kept in a cookie for a year, and the
  // browser goes back to the page it came from (a path on this origin only).
  const LanguageParams = Type.Object({ code: Type.String({ maxLength: 10 }) });
  const LanguageQuery = Type.Object({ next: short(4000) }, { additionalProperties: false });
  app.get('/language/:code', { schema: { hide: true, params: LanguageParams, querystring: LanguageQuery } }, async (request, reply) => {
    const { code } = request.params;
    if (!isLocale(code)) {
      const { t } = pageText(ctx.config, request);
      return renderError(reply, 404, errorTitle(t, 404), t('errors.notFound'));
    }
    setLanguageCookie(ctx.config, reply, code);
    return reply.header('cache-control', 'no-store').redirect(localPath(request.query.next) ?? '/account', 303);
  });

  app.get('/sign-in', { schema: { hide: true, querystring: FlowQuery } }, async (request, reply) =>
    showSignIn(ctx, request, reply, {
      clientId: request.query.client_id,
      returnTo: request.query.return_to,
      switchAccount: request.query.switch === '1',
      reauth: request.query.reauth === '1',
    }),
  );

  app.post(
    '/sign-in',
    { config: { rateLimit: limits.signIn }, schema: { hide: true, body: SignInForm } },
    async (request, reply) => {
      const form = request.body;
      checkFormToken(ctx.config, request, form.csrf_token);
      const appId = (await pageApplication(ctx, form.client_id))?.id;
      try {
        // One field takes an e-mail address or a username (spec directory-sources.md, "Signing in").
        const outcome = await signInWithPassword(
          ctx,
          { login: form.email ?? '', password: form.password ?? '', applicationId: appId },
          'either',
          clientInfo(ctx, request),
          request,
          { next: safeReturnTo(ctx, form.return_to) },
        );
        if (needsSecondFactor(outcome)) return redirectToSecondStep(reply, ctx.config, outcome);
        await sendSessionCookie(ctx, reply, outcome);
        return reply.redirect(safeReturnTo(ctx, form.return_to), 303);
      } catch (error) {
        const refused = refusal(ctx, request, reply, error);
        return showSignIn(ctx, request, reply.status(refused.status), {
          clientId: appId, returnTo: form.return_to, switchAccount: true, email: form.email ?? '', refused,
        });
      }
    },
  );

  app.get('/sign-up', { schema: { hide: true, querystring: FlowQuery } }, async (request, reply) =>
    showSignUp(ctx, request, reply, { clientId: request.query.client_id, returnTo: request.query.return_to }),
  );

  app.post(
    '/sign-up',
    { config: { rateLimit: limits.signUp }, schema: { hide: true, body: SignUpForm } },
    async (request, reply) => {
      const form = request.body;
      checkFormToken(ctx.config, request, form.csrf_token);
      const appId = (await pageApplication(ctx, form.client_id))?.id;
      try {
        const signedUp = await signUpWithEmail(
          ctx,
          {
            email: form.email ?? '',
            password: form.password ?? '',
            name: form.name || undefined,
            applicationId: form.invitation_token ? undefined : appId,
            invitationToken: form.invitation_token || undefined,
          },
          clientInfo(ctx, request),
        );
        await sendVerificationEmail(ctx, signedUp.person, request.log, pageText(ctx.config, request).locale);
        await sendSessionCookie(ctx, reply, signedUp);
        return reply.redirect(safeReturnTo(ctx, form.return_to), 303);
      } catch (error) {
        const refused = refusal(ctx, request, reply, error);
        return showSignUp(ctx, request, reply.status(refused.status), {
          clientId: appId, returnTo: form.return_to, invitationToken: form.invitation_token || undefined,
          email: form.email, name: form.name, error: refused.message,
        });
      }
    },
  );
};

/** The feature plugin: hosted pages in their own scope (form bodies, HTML errors). */
export const pagesFeature: FastifyPluginAsync<FeatureOptions> = async (app) => {
  await app.register(pageRoutes);
  await app.register(secondFactorPagesPlugin);
  // Logos and accent stylesheets: files, not pages (their errors are problem+json).
  await app.register(brandRoutes);
};
