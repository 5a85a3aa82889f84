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
import { clearSessionCookie, frontChannelLogout, readSession } from '../accounts/session.js';
import { PROVIDERS, isConfigured, providerName } from '../applications/providers.js';
import {
  changePassword,
  endOwnSession,
  listLinkedAccounts,
  listMemberships,
  listSessions,
  signOutOtherSessions,
  unlinkAccount,
  updateOwnProfile,
  type Me,
} from '../self-service/service.js';
import { renderPage } from './render.js';
import { securityView } from './account-security.js';
import {
  addPasskey,
  confirmTotp,
  regenerateRecoveryCodes,
  removePasskey,
  removeTotp,
  renameOwnPasskey,
  startTotpEnrolment,
} from '../accounts/second-factor/service.js';
import { takeRegistrationChallenge } from '../accounts/second-factor/registration-challenges.js';
import { challengeOf, verifyRegistration } from '../accounts/second-factor/webauthn.js';
import { requireRecentSignIn } from '../accounts/session.js';
import { preparePageScope } from './page-scope.js';
import { pageText, type Translate } from '../i18n/index.js';
import { problemText } from './text.js';
import { recoveryCodesPage } from './second-factor-pages.js';
import { putFlash, takeFlash, type AccountFlash, type ErrorTarget } from './account-flash.js';
import { consentsOfPerson, withdrawConsent } from '../oauth/consent.js';
import { scopeWords } from './scope-words.js';
import { mailerFor } from '../mail/mailer.js';
import { sendVerificationEmail } from '../accounts/email-verification.js';
import { updatePerson } from '../people/service.js';
import type { AccountForms } from '../plugin-api/registries.js';

/**
 * The notices a form's success comes back with (`/account?notice=…`): keys of `account.notices`.
 * The plugins' sections bring their own (plugin-api/registries.ts `AccountSection.notices`).
 */
export const NOTICES = [
  'profile_saved', 'session_ended', 'others_signed_out', 'account_unlinked', 'account_linked', 'password_changed', 'signed_out',
  'totp_enabled', 'totp_removed', 'passkey_added', 'passkey_renamed', 'passkey_removed', 'verification_sent', 'consent_withdrawn',
  'names_saved',
] as const;
type Notice = (typeof NOTICES)[number];

const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const CsrfOnly = Type.Object({ csrf_token: short(200) }, { additionalProperties: false });
/** Profile forms post `profile.<key>` fields next to the token; the service judges the keys. */
const ProfileForm = Type.Object(
  { csrf_token: short(200) },
  { additionalProperties: Type.String({ maxLength: 10_000 }), maxProperties: 60 },
);
const PasswordForm = Type.Object(
  { csrf_token: short(200), current_password: short(512), new_password: short(1000), confirm_password: short(1000) },
  { additionalProperties: false },
);
const NamesForm = Type.Object(
  { csrf_token: short(200), name: short(1000), given_name: short(1000), family_name: short(1000) },
  { additionalProperties: false },
);
const AccountQuery = Type.Object({ notice: short(50) }, { additionalProperties: false });
const CodeForm = Type.Object({ csrf_token: short(200), code: short(64) }, { additionalProperties: false });
const RenameForm = Type.Object({ csrf_token: short(200), name: short(100) }, { additionalProperties: false });
const PasskeyForm = Type.Object({ csrf_token: short(200), name: short(100), response: short(60_000) }, { additionalProperties: false });
const PasskeyParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

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
const appAnchor = (appId: string) => `app-${appId.replace(/[^a-zA-Z0-9_-]/g, '_')}`;

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

/** Turns a profile form into the update the service expects (typed values; empty clears). */
export function profileUpdate(fields: ProfileField[], form: Record<string, string | undefined>): Record<string, unknown> {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const update: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(form)) {
    if (!name.startsWith('profile.') || raw === undefined) continue;
    const key = name.slice('profile.'.length);
    const type = byKey.get(key)?.type;
    if (type === 'boolean') update[key] = raw === 'true';
    else if (raw.trim() === '') update[key] = null;
    else if (type === 'number' || type === 'integer') update[key] = Number.isNaN(Number(raw)) ? raw : Number(raw);
    else update[key] = raw;
  }
  // An unticked checkbox is not submitted at all: it means false.
  for (const f of fields) if (f.type === 'boolean' && f.user_editable && !(`profile.${f.key}` in form)) update[f.key] = false;
  return update;
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

  app.post(
    '/account/profile/:appId',
    { schema: { hide: true, params: Type.Object({ appId: Type.String({ maxLength: 200 }) }), body: ProfileForm } },
    async (request, reply) => {
      const form = request.body as Record<string, string | undefined>;
      const me = await formCaller(request, form.csrf_token);
      if (!me) return back(reply, 'signed_out');
      const appId = request.params.appId;
      const fields = (await listMemberships(ctx, me)).find((r) => r.app.id === appId)?.app.authPolicy.profile_fields ?? [];
      const submitted = Object.fromEntries(
        Object.entries(form).flatMap(([k, v]) => (k.startsWith('profile.') && v !== undefined ? [[k.slice(8), v]] : [])),
      );
      const refused = await act(
        request, reply, `profile:${appId}`,
        async () => updateOwnProfile(ctx, me, appId, profileUpdate(fields, form)),
        { applicationId: appId, profile: submitted },
        new Map(fields.map((f) => [f.key, f.label])),
      );
      return refused ?? back(reply, 'profile_saved', appAnchor(appId));
    },
  );

  // The person's own names (people/service.ts: the same change as `PATCH /api/me`); blank clears one.
  app.post('/account/names', { schema: { hide: true, body: NamesForm } }, async (request, reply) => {
    const form = request.body;
    const me = await formCaller(request, form.csrf_token);
    if (!me) return back(reply, 'signed_out');
    const { t } = pageText(ctx.config, request);
    const labels = new Map([['name', t('account.names.name')], ['givenName', t('account.names.given')], ['familyName', t('account.names.family')]]);
    const refused = await act(request, reply, 'names', async () => updatePerson(ctx, me.person.id, {
      name: form.name ?? null, givenName: form.given_name ?? null, familyName: form.family_name ?? null,
    }, `person:${me.person.id}`), undefined, labels);
    return refused ?? back(reply, 'names_saved', 'names');
  });

  app.post(
    '/account/sessions/:sid/sign-out',
    { schema: { hide: true, params: Type.Object({ sid: Type.String({ maxLength: 200 }) }), body: CsrfOnly } },
    async (request, reply) => {
      const me = await formCaller(request, request.body.csrf_token);
      if (!me) return back(reply, 'signed_out');
      let wasCurrent = false;
      const refused = await act(request, reply, 'sessions', async () => {
        wasCurrent = (await endOwnSession(ctx, me, request.params.sid)).wasCurrent;
      });
      if (refused) return refused;
      if (wasCurrent) clearSessionCookie(reply, ctx.config);
      return wasCurrent ? back(reply, 'signed_out') : back(reply, 'session_ended', 'devices');
    },
  );

  app.post('/account/sessions/sign-out-others', { schema: { hide: true, body: CsrfOnly } }, async (request, reply) => {
    const me = await formCaller(request, request.body.csrf_token);
    if (!me) return back(reply, 'signed_out');
    await signOutOtherSessions(ctx, me);
    return back(reply, 'others_signed_out', 'devices');
  });

  app.post(
    '/account/linked-accounts/:provider/unlink',
    { schema: { hide: true, params: Type.Object({ provider: Type.String({ maxLength: 64 }) }), body: CsrfOnly } },
    async (request, reply) => {
      const me = await formCaller(request, request.body.csrf_token);
      if (!me) return back(reply, 'signed_out');
      const refused = await act(request, reply, 'accounts', async () => unlinkAccount(ctx, me, request.params.provider));
      return refused ?? back(reply, 'account_unlinked', 'sign-in-methods');
    },
  );

  app.post(
    '/account/password',
    { config: { rateLimit: limits.signIn }, schema: { hide: true, body: PasswordForm } },
    async (request, reply) => {
      const form = request.body;
      const me = await formCaller(request, form.csrf_token);
      if (!me) return back(reply, 'signed_out');
      const refused = await act(request, reply, 'password', async () => {
        if ((form.new_password ?? '') !== (form.confirm_password ?? '')) {
          throw new Problem(400, 'password_mismatch', 'The new password and its confirmation differ.');
        }
        await changePassword(ctx, me, { currentPassword: form.current_password ?? '', newPassword: form.new_password ?? '' });
      }, undefined, new Map([['newPassword', pageText(ctx.config, request).t('account.password.new')]]));
      return refused ?? back(reply, 'password_changed', 'password');
    },
  );

  // --- Security: second factors (spec second-factor.md, "What people see") -------------------

  const codesPage = (reply: FastifyReply, me: Me, codes: string[], next: string) => recoveryCodesPage(reply, me.person.email, codes, next);

  app.post('/account/security/totp/start', { schema: { hide: true, body: CsrfOnly } }, async (request, reply) => {
    const me = await formCaller(request, request.body.csrf_token);
    if (!me) return back(reply, 'signed_out');
    const refused = await act(request, reply, 'security', async () => startTotpEnrolment(ctx, me.person, me.session.id));
    return refused ?? reply.redirect('/account#security', 303);
  });

  app.post('/account/security/totp/confirm', { config: { rateLimit: limits.signIn }, schema: { hide: true, body: CodeForm } }, async (request, reply) => {
    const me = await formCaller(request, request.body.csrf_token);
    if (!me) return back(reply, 'signed_out');
    let codes: string[] | undefined;
    const refused = await act(request, reply, 'security', async () => {
      codes = (await confirmTotp(ctx, me.person, request.body.code ?? '', `person:${me.person.id}`)).recoveryCodes;
    });
    if (refused) return refused;
    return codes ? codesPage(reply, me, codes, '/account?notice=totp_enabled#security') : back(reply, 'totp_enabled', 'security');
  });

  app.post('/account/security/totp/remove', { schema: { hide: true, body: CsrfOnly } }, async (request, reply) => {
    const me = await formCaller(request, request.body.csrf_token);
    if (!me) return back(reply, 'signed_out');
    const refused = await act(request, reply, 'security', async () => removeTotp(ctx, me.person, me.session.id));
    return refused ?? back(reply, 'totp_removed', 'security');
  });

  // The page's script asks /api/me/passkeys/options (same session) and posts the browser's answer here.
  app.post('/account/security/passkeys', { schema: { hide: true, body: PasskeyForm } }, async (request, reply) => {
    const me = await formCaller(request, request.body.csrf_token);
    if (!me) return back(reply, 'signed_out');
    let codes: string[] | undefined;
    const refused = await act(request, reply, 'security', async () => {
      await requireRecentSignIn(ctx, me.session.id);
      let response: unknown;
      try {
        response = JSON.parse(request.body.response ?? '');
      } catch {
        throw new Problem(400, 'passkey_no_answer', 'The passkey answer did not arrive; try again.');
      }
      const challenge = await takeRegistrationChallenge(ctx, me.session.id, challengeOf(response));
      const verified = await verifyRegistration(ctx.config, me.person.id, (request.body.name || 'Passkey').slice(0, 100), response, challenge);
      codes = (await addPasskey(ctx, me.person, verified, `person:${me.person.id}`)).recoveryCodes;
    });
    if (refused) return refused;
    return codes ? codesPage(reply, me, codes, '/account?notice=passkey_added#security') : back(reply, 'passkey_added', 'security');
  });

  app.post('/account/security/passkeys/:id/rename', { schema: { hide: true, params: PasskeyParams, body: RenameForm } }, async (request, reply) => {
    const me = await formCaller(request, request.body.csrf_token);
    if (!me) return back(reply, 'signed_out');
    const refused = await act(request, reply, 'security', async () => {
      const name = (request.body.name ?? '').trim();
      if (!name) throw new Problem(400, 'passkey_name_missing', 'Give the passkey a name.');
      await renameOwnPasskey(ctx, me.person, request.params.id, name);
    });
    return refused ?? back(reply, 'passkey_renamed', 'security');
  });

  app.post('/account/security/passkeys/:id/remove', { schema: { hide: true, params: PasskeyParams, body: CsrfOnly } }, async (request, reply) => {
    const me = await formCaller(request, request.body.csrf_token);
    if (!me) return back(reply, 'signed_out');
    const refused = await act(request, reply, 'security', async () => removePasskey(ctx, me.person, me.session.id, request.params.id));
    return refused ?? back(reply, 'passkey_removed', 'security');
  });

  app.post('/account/security/recovery-codes', { schema: { hide: true, body: CsrfOnly } }, async (request, reply) => {
    const me = await formCaller(request, request.body.csrf_token);
    if (!me) return back(reply, 'signed_out');
    let codes: string[] = [];
    const refused = await act(request, reply, 'security', async () => {
      codes = await regenerateRecoveryCodes(ctx, me.person, me.session.id);
    });
    return refused ?? codesPage(reply, me, codes, '/account#security');
  });

  // "Send verification e-mail" for an address not confirmed yet (the resend rules of the JSON API).
  app.post('/account/verify-email', { config: { rateLimit: limits.passwordReset }, schema: { hide: true, body: CsrfOnly } }, async (request, reply) => {
    const me = await formCaller(request, request.body.csrf_token);
    if (!me) return back(reply, 'signed_out');
    const refused = await act(request, reply, 'verify', async () => {
      const outcome = await sendVerificationEmail(ctx, me.person, request.log, pageText(ctx.config, request).locale);
      if (outcome === 'already_verified') throw new Problem(409, 'email_already_verified', 'Your e-mail address is already verified.');
      if (outcome === 'mail_not_configured') throw new Problem(404, 'mail_not_configured', 'This server cannot send e-mail (SMTP_URL is not set).');
      if (outcome === 'sent_recently') throw new Problem(429, 'verification_sent_recently', 'A confirmation link was sent less than a minute ago.');
    });
    return refused ?? back(reply, 'verification_sent', 'verify');
  });

  // Withdrawing what the person allowed an application (explicit consent).
  app.post(
    '/account/consents/:appId/withdraw',
    { schema: { hide: true, params: Type.Object({ appId: Type.String({ maxLength: 200 }) }), body: CsrfOnly } },
    async (request, reply) => {
      const me = await formCaller(request, request.body.csrf_token);
      if (!me) return back(reply, 'signed_out');
      const appId = request.params.appId;
      const refused = await act(request, reply, `profile:${appId}`, async () => withdrawConsent(ctx, me.person.id, appId));
      return refused ?? back(reply, 'consent_withdrawn', appAnchor(appId));
    },
  );

  // --- The plugins' sections (app passwords: app-passwords/account-section.ts) -----------------

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
