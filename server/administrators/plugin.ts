/**
 * Named administrators (spec administrators-and-people.md) as a protocol plugin (plugin-api/):
 * - the panel's access tokens as an admin credential (panel-access.ts), weighed by the admin
 *   guard against the route's rule like any administrator's;
 * - the administrators' routes, `GET /api/admin/me` and the password policy in the admin API, and
 *   the first run (`/api/setup`, `POST /api/admin/setup/owner`: setup-routes.ts);
 * - the last owner is neither disabled nor deleted (409 `last_owner`: a change guard), a deleted
 *   person's role goes with them, and owners join every new application as its administrators
 *   (so its Test sign-in works at once);
 * - what this process remembers of panel grants is forgotten once a person's access changed.
 * The built-in panel client's row is kept as this release defines it (panel-client.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { inArray } from 'drizzle-orm';
import type { FeatureOptions, GatehousePlugin } from '../context.js';
import { people } from '../db/schema.js';
import { afterCommit, many } from '../db/store.js';
import { needs } from '../http/admin-policy.js';
import { createMembership } from '../members/create.js';
import { passwordPolicy } from '../accounts/password-policy.js';
import type { SessionEndReason } from '../plugin-api/hooks.js';
import { countOwners, findGrant, listAdministrators, ownerIds } from './queries.js';
import { lastOwner, revokeRole } from './service.js';
import { forgetPanelGrants, panelActor } from './panel-access.js';
import { ensurePanelClient } from './panel-client.js';
import { administratorAdminRoutes } from './routes.js';
import { setupPlugin } from './setup-routes.js';

/** The session ends after which a person's panel access may have ended (an administrator's doing). */
const ACCESS_ENDING: ReadonlySet<SessionEndReason> = new Set(['person_disabled', 'person_deleted', 'signed_out_by_administrator']);

export const administratorsPlugin: GatehousePlugin = {
  name: 'administrators',
  setup(ctx) {
    const { hooks, registries } = ctx;
    const forget = () => forgetPanelGrants(ctx.db);
    registries.adminCredentials.add({
      name: 'panel',
      authenticate: (token) => panelActor(ctx, token),
      roleOf: async (personId) => (await findGrant(ctx.db, personId))?.role,
    });
    registries.adminRoutes.add({
      name: 'administrators',
      routes: administratorAdminRoutes,
      // What every administrator's panel reads; the administrators themselves and policy changes are the owner's (the default).
      policy: { 'GET /me': needs.administrator, 'GET /settings/password-policy': needs.administrator },
    });
    registries.guards.add({
      name: 'last-owner',
      // The last owner can be neither disabled nor deleted.
      async person(tx, person, change) {
        if (change.kind !== 'disable' && change.kind !== 'delete') return;
        const grant = await findGrant(tx, person.id);
        if (grant?.role === 'owner' && (await countOwners(tx)) <= 1) throw lastOwner();
      },
    });
    hooks.on('personDeleted', async ({ tx, now, person, actor }) => {
      if (await findGrant(tx, person.id)) await revokeRole(ctx, tx, now, person.id, actor, person.email);
      afterCommit(tx, forget);
    });
    hooks.on('personStatusChanged', ({ tx }) => afterCommit(tx, forget));
    hooks.on('sessionsEnded', ({ tx, reason }) => {
      if (ACCESS_ENDING.has(reason)) afterCommit(tx, forget);
    });
    // Owners join every new application as its administrators (spec administrators-and-people.md, "First run").
    hooks.on('applicationChanged', async ({ tx, now, applicationId, change }) => {
      if (change !== 'created') return;
      const ids = await ownerIds(tx);
      if (!ids.length) return;
      const owners = await many(tx.select({ id: people.id, email: people.email, name: people.name }).from(people).where(inArray(people.id, ids)));
      for (const owner of owners) await createMembership(tx, now, applicationId, owner, 'admin');
    });
    const routes: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
      // While administrators exist, the panel client's row is rewritten at start (panel-client.ts).
      if ((await listAdministrators(app.ctx.db)).length) await ensurePanelClient(app.ctx.db, app.ctx.config.issuer, app.ctx.clock.now());
      // Read once now, so the first page's new-password hint states the stored policy.
      await passwordPolicy(app.ctx.db);
      await app.register(setupPlugin, options);
    };
    return routes;
  },
};
