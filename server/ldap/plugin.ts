/**
 * The LDAP directory (spec ldap.md; docs/ldap.md) as a protocol plugin (plugin-api/): the
 * application field `ldap` with its service account (application-field.ts) and the route that
 * makes its password again, the listener in the control panel's overview (its line in
 * `gatehouse status` is status.ts, which the command reads without a server), and `gatehouse_ldap_binds_total`. The listener itself (server.ts) is started
 * by the composition beside HTTP (main.ts), with the same certificate; it reads the directory
 * through the same query modules as the rest (queries.ts) and checks binds with app passwords
 * (app-passwords/verify.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { GatehousePlugin } from '../context.js';
import { ldapBaseDn } from '../config.js';
import { actorName, requireActorScope } from '../http/admin-auth.js';
import { needs } from '../http/admin-policy.js';
import { adminErrors, adminSecurity as security, IdParams, NoQuery } from '../http/schemas.js';
import { ldapField, LdapPasswordSchema, rotateLdapPassword } from './application-field.js';
import { LDAP_BINDS } from './metrics.js';
import { runningListener } from './running.js';

const passwordRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/applications/:id/ldap/password',
    {
      schema: {
        tags: ['applications'], security, summary: 'New password for the application\'s LDAP service account (shown once; the old one stops binding)',
        params: IdParams, querystring: NoQuery,
        response: { 200: LdapPasswordSchema, ...adminErrors },
      },
    },
    async (request) => {
      // The service account's password reads the directory: admin only (applications/key-limits.ts).
      requireActorScope(request.actor, undefined, 'make a new LDAP service-account password');
      return rotateLdapPassword(app.ctx, request.params.id, actorName(request.actor));
    },
  );
};

const OverviewSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'whether this server runs the LDAP directory (GATEHOUSE_LDAP=on)' }),
    url: Type.Union([Type.String(), Type.Null()], { description: 'ldap://host:port, when running' }),
    ldapsUrl: Type.Union([Type.String(), Type.Null()], { description: 'ldaps://host:port, when running with LAN TLS' }),
    startTls: Type.Boolean(),
    baseDn: Type.String({ description: 'the base DN (GATEHOUSE_LDAP_BASE_DN, or derived from the issuer)' }),
    connections: Type.Integer({ description: 'LDAP connections open now' }),
  },
  { additionalProperties: false },
);

export const ldapPlugin: GatehousePlugin = {
  name: 'ldap',
  setup(ctx) {
    const { registries } = ctx;
    registries.applicationFields.add(ldapField(ctx.config));
    registries.adminRoutes.add({ name: 'ldap', routes: passwordRoutes, policy: { 'POST /applications/:id/ldap/password': needs.app() } });
    registries.overviewSections.add({
      name: 'ldap',
      schema: OverviewSchema,
      value() {
        const running = runningListener(ctx)?.state();
        if (!running) return { enabled: false, url: null, ldapsUrl: null, startTls: false, baseDn: ldapBaseDn(ctx.config), connections: 0 };
        return { enabled: true, url: running.url, ldapsUrl: running.ldapsUrl, startTls: running.startTls, baseDn: running.baseDn ?? ldapBaseDn(ctx.config), connections: running.connections };
      },
    });
    ctx.metrics.counter(LDAP_BINDS);
  },
};
