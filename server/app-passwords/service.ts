/**
 * App passwords (spec ldap.md, "People bind with app passwords"): what a signed-in person may make,
 * see and revoke. The JSON API (`routes.ts`, under /api/me) and the account page both call these
 * functions, so each rule lives here once.
 *
 * - Made for one application the person is an active member of, when that application takes app
 *   passwords (`acceptsAppPasswords`); it needs a sign-in within the last 10 minutes, like adding a
 *   second factor: an app password signs in without one, so a stolen session must not mint one.
 *   For an application with `mfa: "required"` the session must be multi-factor too (403
 *   `step_up_required`; issue 49, H9): an app password is a way into that application, and without
 *   this a person signed in with a password alone would use it over LDAP or Basic without ever
 *   setting up the second factor it asks for. The account page sends the person through the
 *   step-up (or enrolment) first.
 * - Shown once (the create answer); stored as a hash (secret.ts). At most APP_PASSWORDS_PER_PERSON.
 * - Revoking deletes it at once: the next bind with it fails.
 * Both are audited (`app_password.created`, `app_password.revoked`), never with the secret.
 */
import type { AppContext } from '../context.js';
import type { Application } from '../db/schema.js';
import type { Me } from '../self-service/service.js';
import { membershipOf } from '../self-service/queries.js';
import { requireRecentSignIn } from '../accounts/session.js';
import { recordAudit } from '../audit/record.js';
import { conflict, forbidden, notFound } from '../http/problem.js';
import { isMultiFactor, mfaRequired } from '../accounts/second-factor/factors.js';
import { iso } from '../http/schemas.js';
import { newId } from '../util/ids.js';
import { transaction } from '../db/store.js';
import { appPasswordHash, newAppPassword } from './secret.js';
import { appPasswordsOf, countAppPasswordsOf, deleteAppPassword, insertAppPassword, type AppPasswordRow } from './queries.js';

export const APP_PASSWORDS_PER_PERSON = 50;

/**
 * Whether an application takes app passwords: it has LDAP on (its members bind with them), its
 * protected hosts take HTTP Basic (`forwardAuth.basic`: DAV clients; server/forward-auth/check.ts),
 * or it has RADIUS settings (PAP and EAP-TTLS/PAP; server/radius/).
 */
export function acceptsAppPasswords(app: Pick<Application, 'ldap' | 'forwardAuth'> & { radius?: unknown }): boolean {
  return app.ldap.enabled || Boolean(app.forwardAuth?.basic) || Boolean(app.radius);
}

export function appPasswordRecord({ password, applicationName }: AppPasswordRow) {
  return {
    id: password.id,
    name: password.name,
    applicationId: password.applicationId,
    applicationName,
    createdAt: iso(password.createdAt)!,
    lastUsedAt: iso(password.lastUsedAt),
  };
}

export async function listAppPasswords(ctx: AppContext, me: Me) {
  return (await appPasswordsOf(ctx.db, me.person.id)).map(appPasswordRecord);
}

export interface AppPasswordCreate {
  applicationId: string;
  name: string;
}

/** 403 `step_up_required`: the application asks for a second factor this session has not given. */
export const stepUpRequired = (appName: string) =>
  forbidden(
    'step_up_required',
    `"${appName}" requires a second factor: sign in with your second factor on this device (or set one up), then make the app password.`,
  );

/** Makes an app password; the answer carries `password`, shown this once. */
export async function createAppPassword(ctx: AppContext, me: Me, input: AppPasswordCreate) {
  const row = await membershipOf(ctx.db, me.person.id, input.applicationId);
  if (!row) throw notFound('membership_not_found', `You are not a member of an application "${input.applicationId}".`);
  if (row.m.status === 'suspended') throw forbidden('membership_suspended', `Your membership of "${row.app.name}" is suspended.`);
  if (!acceptsAppPasswords(row.app)) {
    throw conflict('app_passwords_not_accepted', `"${row.app.name}" does not take app passwords (its administrator has turned on neither LDAP nor HTTP Basic on its protected hosts).`);
  }
  if (mfaRequired(row.app) && !isMultiFactor(me.session.amr)) throw stepUpRequired(row.app.name);
  await requireRecentSignIn(ctx, me.session.id);
  const password = newAppPassword();
  const now = ctx.clock.now();
  const created = await transaction(ctx.db, async (tx) => {
    if ((await countAppPasswordsOf(tx, me.person.id)) >= APP_PASSWORDS_PER_PERSON) {
      throw conflict('app_password_limit', `You have ${APP_PASSWORDS_PER_PERSON} app passwords already; revoke one you no longer use first.`);
    }
    const inserted = await insertAppPassword(tx, {
      id: newId('apw'),
      personId: me.person.id,
      applicationId: row.app.id,
      membershipId: row.m.id,
      name: input.name,
      secretHash: appPasswordHash(password),
      createdAt: now,
    });
    await recordAudit(tx, now, {
      actor: `person:${me.person.id}`,
      action: 'app_password.created',
      applicationId: row.app.id,
      target: inserted.id,
      details: { name: inserted.name },
    });
    return inserted;
  });
  return { ...appPasswordRecord({ password: created, applicationName: row.app.name }), password };
}

export async function revokeAppPassword(ctx: AppContext, me: Me, id: string): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const gone = await deleteAppPassword(tx, me.person.id, id);
    if (!gone) throw notFound('app_password_not_found', `You have no app password "${id}".`);
    await recordAudit(tx, now, {
      actor: `person:${me.person.id}`,
      action: 'app_password.revoked',
      applicationId: gone.applicationId,
      target: gone.id,
      details: { name: gone.name },
    });
  });
}
