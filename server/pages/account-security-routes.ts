/**
 * The account page's security section: second factors (spec second-factor.md, "What people see"):
 * an authenticator app (TOTP) enrolled and removed, passkeys added, renamed and removed, recovery
 * codes regenerated; the codes are shown once on their own page (second-factor-pages.ts).
 */
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { Problem } from '../http/problem.js';
import { requireRecentSignIn } from '../accounts/session.js';
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
import type { Me } from '../self-service/service.js';
import { recoveryCodesPage } from './second-factor-pages.js';
import { CsrfOnly, short, type PageApp, type PageForms } from './account-forms.js';

const CodeForm = Type.Object({ csrf_token: short(200), code: short(64) }, { additionalProperties: false });
const RenameForm = Type.Object({ csrf_token: short(200), name: short(100) }, { additionalProperties: false });
const PasskeyForm = Type.Object({ csrf_token: short(200), name: short(100), response: short(60_000) }, { additionalProperties: false });
const PasskeyParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

/** `POST /account/security/…`. */
export function securitySectionRoutes(app: PageApp, forms: PageForms): void {
  const { ctx } = app;
  const { caller: formCaller, act, back, limits } = forms;

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
}
