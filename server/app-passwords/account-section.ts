/**
 * The app passwords section of the account page (spec ldap.md; plugin-api/registries.ts
 * `AccountSection`): the person's app passwords and the applications they may make one for
 * (active memberships of applications that take them), absent when neither exists; the form that
 * makes one shows it once on a page of its own, and each can be revoked. Drawn by
 * server/pages/templates/account/app-passwords.eta.
 */
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { Problem } from '../http/problem.js';
import { pageText } from '../i18n/index.js';
import type { AccountSection } from '../plugin-api/registries.js';
import { redirectToStepUp } from '../accounts/second-factor/flow.js';
import { getApplication } from '../applications/lookup.js';
import { acceptsAppPasswords, createAppPassword, listAppPasswords, revokeAppPassword } from './service.js';

const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const AppPasswordForm = Type.Object({ csrf_token: short(200), application_id: short(200), name: short(100) }, { additionalProperties: false });
const RevokeForm = Type.Object({ csrf_token: short(200) }, { additionalProperties: false });
const Params = Type.Object({ id: Type.String({ maxLength: 200 }) });

export function appPasswordsSection(ctx: AppContext): AccountSection {
  return {
    name: 'app-passwords',
    after: 'security',
    notices: ['app_password_revoked'],
    async view({ me, memberships, t, when }) {
      const applications = memberships.filter(({ m, app }) => m.status === 'active' && acceptsAppPasswords(app)).map(({ app }) => ({ id: app.id, name: app.name }));
      const list = (await listAppPasswords(ctx, me)).map((p) => ({
        id: p.id,
        name: p.name,
        details: p.lastUsedAt
          ? t('account.appPasswords.used', { app: p.applicationName, added: when(p.createdAt), used: when(p.lastUsedAt) })
          : t('account.appPasswords.unused', { app: p.applicationName, added: when(p.createdAt) }),
        revokeAction: `/account/app-passwords/${encodeURIComponent(p.id)}/revoke`,
      }));
      return list.length || applications.length ? { list, applications } : undefined;
    },
    routes(app, forms) {
      app.post('/account/app-passwords', { schema: { hide: true, body: AppPasswordForm } }, async (request, reply) => {
        const body = request.body as { csrf_token?: string; application_id?: string; name?: string };
        const me = await forms.caller(request, body.csrf_token);
        if (!me) return forms.back(reply, 'signed_out');
        let created: Awaited<ReturnType<typeof createAppPassword>> | undefined;
        let stepUp = false;
        const { t } = pageText(ctx.config, request);
        const applicationId = body.application_id ?? '';
        const refused = await forms.act(request, reply, 'app-passwords', async () => {
          const name = (body.name ?? '').trim();
          if (!name) throw new Problem(400, 'app_password_name_missing', 'Say what the app password is for.');
          try {
            created = await createAppPassword(ctx, me, { applicationId, name });
          } catch (error) {
            if (!(error instanceof Problem) || error.code !== 'step_up_required') throw error;
            stepUp = true;
          }
        });
        // The application requires a second factor this session has not given: the step-up (or
        // enrolment) first, back to this section to make the app password again (issue 49, H9).
        if (stepUp) return redirectToStepUp(ctx, request, reply, me, await getApplication(ctx, applicationId), '/account#app-passwords');
        if (refused || !created) return refused;
        return forms.render(reply.header('cache-control', 'no-store'), 'app-password', {
          title: t('appPassword.title'),
          password: created.password,
          application: created.applicationName,
          name: created.name,
          logins: [me.person.username, me.person.email],
          next: '/account#app-passwords',
        });
      });

      app.post('/account/app-passwords/:id/revoke', { schema: { hide: true, params: Params, body: RevokeForm } }, async (request, reply) => {
        const body = request.body as { csrf_token?: string };
        const { id } = request.params as { id: string };
        const me = await forms.caller(request, body.csrf_token);
        if (!me) return forms.back(reply, 'signed_out');
        const refused = await forms.act(request, reply, 'app-passwords', async () => revokeAppPassword(ctx, me, id));
        return refused ?? forms.back(reply, 'app_password_revoked', 'app-passwords');
      });
    },
  };
}
