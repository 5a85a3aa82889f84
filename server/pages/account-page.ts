/**
 * The account page `/account` (DESIGN §4.8): a signed-in person's memberships with a profile form
 * per application (generated from its `profile_fields`), sessions with "Sign out this device" and
 * "Sign out everywhere else", linked accounts with unlink (and "Link …" forms for configured
 * providers, handled by the providers feature), password change and sign-out. Without a session
 * it offers sign-in (whose success lands back here).
 *
 * Every form carries the double-submit CSRF token and posts to a route here that calls the same
 * service functions as the JSON API (`self-service/service.ts`), then answers 303 back to
 * `/account?notice=…` (a fixed message, never reflected text) or re-renders with the error.
 *
 * This module shows the page and holds the forms' shared rules (CSRF, post/redirect/get with a
 * flash); each section's form routes live beside it: account-profile-routes.ts (profiles, names,
 * e-mail verification, consents), account-sign-in-routes.ts (devices, linked accounts, password),
 * account-security-routes.ts (second factors), and the plugins' sections through the registry.
 */
import { hasLocalCa } from '../config.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import type { ProfileField } from '../db/schema.js';
import { Problem } from '../http/problem.js';
import { checkFormToken, formToken } from '../accounts/csrf.js';
import { authRateLimits } from '../accounts/rate-limits.js';
import { signOut } from '../accounts/routes.js';
import { frontChannelLogout, readSession } from '../accounts/session.js';
import { PROVIDERS, isConfigured, providerName } from '../applications/providers.js';
import { listLinkedAccounts, listMemberships, listSessions, type Me } from '../self-service/service.js';
import { renderPage } from './render.js';
import { securityView } from './account-security.js';
import { preparePageScope } from './page-scope.js';
import { pageText, type Translate } from '../i18n/index.js';
import { problemText } from './text.js';
import { putFlash, takeFlash, type AccountFlash, type ErrorTarget } from './account-flash.js';
import { consentsOfPerson } from '../oauth/consent.js';
import { scopeWords } from './scope-words.js';
import { mailerFor } from '../mail/mailer.js';
import type { AccountForms } from '../plugin-api/registries.js';
import { CsrfOnly, NOTICES, appAnchor, short, type Notice, type PageForms } from './account-forms.js';
import { profileSectionRoutes } from './account-profile-routes.js';
import { signInSectionRoutes } from './account-sign-in-routes.js';
import { securitySectionRoutes } from './account-security-routes.js';

const AccountQuery = Type.Object({ notice: short(50) }, { additionalProperties: false });

interface AccountView {
  notice?: string | undefined;
  error?: AccountFlash['error'];
  /** Submitted values to show again after a refused profile form. */
  values?: AccountFlash['values'];
}

const INPUT_TYPES: Record<ProfileField['type'], string> = {
  string: 'text', text: 'textarea', number: 'number', integer: 'number', boolean: 'checkbox',
  email: 'email', url: 'url', date: 'date', select: 'select',
};

/** The anchor of the section a refusal is shown in (the redirect after it lands there). */
function anchorOf(target: ErrorTarget): string {
  if (target.startsWith('profile:')) return appAnchor(target.slice('profile:'.length));
  const anchors: Record<string, string> = {
    sessions: 'devices', accounts: 'sign-in-methods', password: 'password', security: 'security', verify: 'verify', names: 'names',
  };
  // A plugin's section is its own target and anchor (`<section id="<name>">`).
  return anchors[target] ?? (target === 'general' ? '' : target);
}

/** "2026-11-22 14:03 UTC": dates on the page are UTC, like everywhere else in Gatehouse. */
const when = (date: Date | string) => `${new Date(date).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

function fieldView(field: ProfileField, stored: unknown, submitted: string | undefined) {
  const value = submitted ?? (stored === undefined || stored === null ? '' : String(stored));
  return {
    key: field.key,
    name: `profile.${field.key}`,
    id: `f-${field.key}`,
    label: field.label,
    description: field.description,
    input: INPUT_TYPES[field.type],
    required: field.required,
    editable: field.user_editable,
    value,
    checked: submitted === undefined ? stored === true : submitted === 'true',
    options: field.options ?? [],
    min: field.min,
    max: field.max,
    step: field.type === 'integer' ? '1' : 'any',
    maxLength: field.max_length,
  };
}

function linkable(ctx: AppContext, linked: Set<string>) {
  return PROVIDERS.filter((p) => p.id !== 'email' && !linked.has(p.id) && isConfigured(p, ctx.config.env)).map((p) => ({
    id: p.id,
    name: providerName(p.id, ctx.config.env),
    action: `/account/link/${p.id}`,
  }));
}

async function showAccount(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, me: Me | undefined, view: AccountView) {
  const csrfToken = formToken(ctx.config, request, reply);
  const { t } = pageText(ctx.config, request);
  if (!me) return renderPage(reply, 'account', { title: t('account.title'), signedIn: false, notice: view.notice });
  const accounts = await listLinkedAccounts(ctx, me);
  const linked = new Set(accounts.map((a) => a.provider));
  const memberships = await listMemberships(ctx, me);
  const approvals = await consentsOfPerson(ctx, me.person.id);
  // A refused form for an application not on the page (not a member) has no form to sit next to.
  const target = view.error?.target;
  const orphan = target?.startsWith('profile:') && !memberships.some(({ app }) => target === `profile:${app.id}`);
  return renderPage(reply, 'account', {
    title: t('account.title'),
    wide: true,
    signedIn: true,
    csrfToken,
    notice: view.notice,
    error: orphan ? { target: 'general', message: view.error!.message } : view.error,
    person: {
      name: me.person.name, email: me.person.email, emailVerified: me.person.emailVerified,
      username: me.person.username, givenName: me.person.givenName, familyName: me.person.familyName,
    },
    canVerify: Boolean(mailerFor(ctx.config)),
    memberships: memberships.map(({ m, app }) => {
      const submitted = view.values?.applicationId === app.id ? view.values.profile : undefined;
      const fields = app.authPolicy.profile_fields.map((f) => fieldView(f, m.profile[f.key], submitted?.[f.key]));
      const consent = approvals.get(app.id);
      return {
        applicationId: app.id,
        applicationName: app.name,
        anchor: appAnchor(app.id),
        roleLabel: t(`roles.${m.role}`),
        suspended: m.status === 'suspended',
        joinedAt: when(m.joinedAt),
        fields,
        editable: fields.some((f) => f.editable),
        action: `/account/profile/${encodeURIComponent(app.id)}`,
        errorTarget: `profile:${app.id}`,
        consent: consent
          ? {
              grantedAt: when(consent.grantedAt),
              asks: scopeWords(t, consent.scope),
              action: `/account/consents/${encodeURIComponent(app.id)}/withdraw`,
            }
          : undefined,
      };
    }),
    sessions: (await listSessions(ctx, me)).map((s) => ({
      ...s,
      createdAt: when(s.created_at),
      lastSeenAt: when(s.last_seen_at),
      action: `/account/sessions/${encodeURIComponent(s.id)}/sign-out`,
    })),
    accounts: accounts.map((a) => ({
      provider: a.provider,
      name: a.provider === 'credential' ? t('account.methods.credential') : providerName(a.provider, ctx.config.env),
      email: a.email,
      linkedAt: when(a.linkedAt),
      canUnlink: accounts.length > 1,
      action: `/account/linked-accounts/${encodeURIComponent(a.provider)}/unlink`,
    })),
    linkable: linkable(ctx, linked),
    hasPassword: Boolean(me.person.passwordHash),
    caUrl: hasLocalCa(ctx.config.tls) ? '/ca.pem' : undefined,
    security: await securityView(ctx, t, me.person, memberships),
    sections: await sectionViews(ctx, t, me, memberships),
  }, { scripts: true, pageModule: Boolean(me.person.passwordHash), here: '/account' });
}

/** The plugins' sections (plugin-api/registries.ts `AccountSection`), by where they stand; a section whose view is undefined is left out. */
async function sectionViews(ctx: AppContext, t: Translate, me: Me, memberships: Awaited<ReturnType<typeof listMemberships>>) {
  const placed: Record<'applications' | 'security', { name: string; view: unknown }[]> = { applications: [], security: [] };
  for (const section of ctx.registries.accountSections.all) {
    const view = await section.view({ me, memberships, t, when });
    if (view !== undefined) placed[section.after].push({ name: section.name, view });
  }
  return placed;
}

/** Post/redirect/get: back to the page, at the section the form belongs to, saying what happened. */
const back = (reply: FastifyReply, notice: Notice | string, anchor = '') => reply.redirect(`/account?notice=${notice}${anchor ? `#${anchor}` : ''}`, 303);

const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const limits = authRateLimits(ctx.config);
  const sectionNotices = ctx.registries.accountSections.all.flatMap((section) => section.notices ?? []);
  const isNotice = (value: string | undefined): value is Notice =>
    (NOTICES as readonly string[]).includes(value ?? '') || sectionNotices.includes(value ?? '');
  await preparePageScope(app);

  /** The CSRF check, then the caller; without a session the form answers with the signed-out page. */
  async function formCaller(request: FastifyRequest, token: string | undefined): Promise<Me | undefined> {
    checkFormToken(ctx.config, request, token);
    return readSession(ctx, request);
  }

  /**
   * Runs a form's action. A refusal is shown post/redirect/get: it waits in a flash cookie for
   * this session (account-flash.ts), and the answer is a 303 to the page at the form's section, where the message is
   * focused (so a reader lands on it, not at the top of the page).
   */
  async function act(
    request: FastifyRequest, reply: FastifyReply, target: ErrorTarget,
    action: () => unknown, values?: AccountFlash['values'], labels?: Map<string, string>,
  ) {
    try {
      await action();
      return undefined;
    } catch (error) {
      // A demand for a fresh sign-in is answered by the page scope's error handler (a trip through sign-in).
      if (!(error instanceof Problem) || error.code === 'reauthentication_required') throw error;
      const { locale, t } = pageText(ctx.config, request);
      putFlash(ctx.config, request, reply, { error: { target, message: problemText(t, locale, error, labels) }, values }, ctx.clock.now().getTime());
      const anchor = anchorOf(target);
      return reply.header('cache-control', 'no-store').redirect(`/account${anchor ? `#${anchor}` : ''}`, 303);
    }
  }

  app.get('/account', { schema: { hide: true, querystring: AccountQuery } }, async (request, reply) => {
    const notice = request.query.notice;
    const me = await readSession(ctx, request);
    // Read (and cleared) whoever asks; shown only to the session it was left for.
    const taken = takeFlash(ctx.config, request, reply, ctx.clock.now().getTime());
    const flash = me ? taken : undefined;
    const { t } = pageText(ctx.config, request);
    return showAccount(ctx, request, reply, me, {
      notice: isNotice(notice) ? t(`account.notices.${notice}`) : undefined,
      error: flash?.error,
      values: flash?.values,
    });
  });

  // --- The sections' forms: the built-in ones, then the plugins' (app-passwords/account-section.ts) ---

  const pageForms: PageForms = { caller: formCaller, act, back, limits };
  profileSectionRoutes(app, pageForms);
  signInSectionRoutes(app, pageForms);
  securitySectionRoutes(app, pageForms);

  const forms: AccountForms = {
    caller: formCaller,
    act: (request, reply, target, action) => act(request, reply, target as ErrorTarget, action),
    back,
    render: (reply, template, data) => renderPage(reply, template, data as Record<string, unknown> & { title: string }),
  };
  for (const section of ctx.registries.accountSections.all) await section.routes?.(app, forms);

  app.post('/account/sign-out', { schema: { hide: true, body: CsrfOnly } }, async (request, reply) => {
    checkFormToken(ctx.config, request, request.body.csrf_token);
    const ended = await signOut(ctx, request, reply);
    // Other sessions of that sign-in to end through the browser first (SAML single logout), then back here.
    const handed = ended ? await frontChannelLogout(ctx, request, reply, { sessionIds: [ended], next: '/account?notice=signed_out', application: undefined }) : undefined;
    return handed ?? back(reply, 'signed_out');
  });
};

/** The account page in its own hosted-page scope (form bodies, HTML errors). */
export const accountPagePlugin: FastifyPluginAsync = async (app) => {
  await app.register(accountRoutes);
};
