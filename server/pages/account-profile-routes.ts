/**
 * The account page's forms about the person and their applications: a profile form per
 * application (its `profile_fields`), the person's own names, "Send verification e-mail", and
 * withdrawing a consent. Each calls the same service as the JSON API (DESIGN §4.8).
 */
import { Type } from 'typebox';
import type { ProfileField } from '../db/schema.js';
import { Problem } from '../http/problem.js';
import { listMemberships, updateOwnProfile } from '../self-service/service.js';
import { updatePerson } from '../people/service.js';
import { sendVerificationEmail } from '../accounts/email-verification.js';
import { withdrawConsent } from '../oauth/consent.js';
import { pageText } from '../i18n/index.js';
import { CsrfOnly, appAnchor, short, type PageApp, type PageForms } from './account-forms.js';

/** Profile forms post `profile.<key>` fields next to the token; the service judges the keys. */
const ProfileForm = Type.Object(
  { csrf_token: short(200) },
  { additionalProperties: Type.String({ maxLength: 10_000 }), maxProperties: 60 },
);
const NamesForm = Type.Object(
  { csrf_token: short(200), name: short(1000), given_name: short(1000), family_name: short(1000) },
  { additionalProperties: false },
);

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

/** `POST /account/profile/:appId`, `/account/names`, `/account/verify-email`, `/account/consents/:appId/withdraw`. */
export function profileSectionRoutes(app: PageApp, forms: PageForms): void {
  const { ctx } = app;
  const { caller: formCaller, act, back, limits } = forms;

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
}
