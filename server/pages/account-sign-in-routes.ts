/**
 * The account page's forms about signing in: "Sign out this device" and "Sign out everywhere
 * else", unlinking a linked account, and changing the password (the JSON API's services).
 */
import { Type } from 'typebox';
import { Problem } from '../http/problem.js';
import { clearSessionCookie } from '../accounts/session.js';
import { changePassword, endOwnSession, signOutOtherSessions, unlinkAccount } from '../self-service/service.js';
import { pageText } from '../i18n/index.js';
import { CsrfOnly, short, type PageApp, type PageForms } from './account-forms.js';

const PasswordForm = Type.Object(
  { csrf_token: short(200), current_password: short(512), new_password: short(1000), confirm_password: short(1000) },
  { additionalProperties: false },
);

/** `POST /account/sessions/…`, `/account/linked-accounts/:provider/unlink`, `/account/password`. */
export function signInSectionRoutes(app: PageApp, forms: PageForms): void {
  const { ctx } = app;
  const { caller: formCaller, act, back, limits } = forms;

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
}
