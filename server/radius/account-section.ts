/**
 * Network certificates on the account page (spec radius.md, "EAP-TLS": "listed and revocable on
 * the account page"; plugin-api/registries.ts `AccountSection`): the person's certificates and the
 * applications they may make one for (active memberships of applications with RADIUS clients),
 * absent when neither exists. Making one (after a sign-in within 10 minutes) shows, on a page of
 * its own and only there, the PKCS#12 file and the Apple profile to download and the file's
 * one-time password. Drawn by server/pages/templates/account/network-certificates.eta.
 */
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { Problem } from '../http/problem.js';
import { pageText } from '../i18n/index.js';
import type { AccountSection } from '../plugin-api/registries.js';
import { requireRecentSignIn } from '../accounts/session.js';
import { issueCertificate, listCertificates, revokeNetworkCertificate } from './certificates.js';

const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const IssueForm = Type.Object({ csrf_token: short(200), application_id: short(200), name: short(100) }, { additionalProperties: false });
const RevokeForm = Type.Object({ csrf_token: short(200) }, { additionalProperties: false });
const Params = Type.Object({ id: Type.String({ maxLength: 200 }) });

export function networkCertificatesSection(ctx: AppContext): AccountSection {
  return {
    name: 'network-certificates',
    after: 'security',
    notices: ['network_certificate_revoked'],
    async view({ me, memberships, t, when }) {
      const applications = memberships.filter(({ m, app }) => m.status === 'active' && Boolean(app.radius?.clients.length)).map(({ app }) => ({ id: app.id, name: app.name }));
      const list = (await listCertificates(ctx, me.person.id)).map((c) => ({
        id: c.id,
        name: c.name,
        revoked: c.revokedAt !== null,
        details: c.revokedAt
          ? t('account.networkCertificates.revoked', { app: c.applicationName, revoked: when(c.revokedAt) })
          : t('account.networkCertificates.valid', { app: c.applicationName, added: when(c.createdAt), expires: when(c.notAfter) }),
        revokeAction: `/account/network-certificates/${encodeURIComponent(c.id)}/revoke`,
      }));
      return list.length || applications.length ? { list, applications } : undefined;
    },
    routes(app, forms) {
      app.post('/account/network-certificates', { schema: { hide: true, body: IssueForm } }, async (request, reply) => {
        const body = request.body as { csrf_token?: string; application_id?: string; name?: string };
        const me = await forms.caller(request, body.csrf_token);
        if (!me) return forms.back(reply, 'signed_out');
        const { t } = pageText(ctx.config, request);
        let issued: Awaited<ReturnType<typeof issueCertificate>> | undefined;
        const refused = await forms.act(request, reply, 'network-certificates', async () => {
          const name = (body.name ?? '').trim();
          if (!name) throw new Problem(400, 'network_certificate_name_missing', 'Say which device the certificate is for.');
          await requireRecentSignIn(ctx, me.session.id);
          issued = await issueCertificate(ctx, me.person, { applicationId: body.application_id ?? '', name }, `person:${me.person.id}`);
        });
        if (refused || !issued) return refused;
        const file = issued.name.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 60) || 'network';
        return forms.render(reply.header('cache-control', 'no-store'), 'network-certificate', {
          title: t('networkCertificate.title'),
          name: issued.name,
          application: issued.applicationName,
          password: issued.password,
          pkcs12: `data:application/x-pkcs12;base64,${issued.pkcs12}`,
          pkcs12File: `${file}.p12`,
          mobileconfig: `data:application/x-apple-aspen-config;base64,${issued.mobileconfig}`,
          mobileconfigFile: `${file}.mobileconfig`,
          next: '/account#network-certificates',
        });
      });

      app.post('/account/network-certificates/:id/revoke', { schema: { hide: true, params: Params, body: RevokeForm } }, async (request, reply) => {
        const body = request.body as { csrf_token?: string };
        const { id } = request.params as { id: string };
        const me = await forms.caller(request, body.csrf_token);
        if (!me) return forms.back(reply, 'signed_out');
        const refused = await forms.act(request, reply, 'network-certificates', async () => revokeNetworkCertificate(ctx, me.person.id, id, `person:${me.person.id}`));
        return refused ?? forms.back(reply, 'network_certificate_revoked', 'network-certificates');
      });
    },
  };
}
