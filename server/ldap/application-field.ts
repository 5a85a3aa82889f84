/**
 * The application field `ldap` (spec ldap.md, "Per application"): `{ enabled }` in bodies,
 * `{ enabled, bindDn }` in the record. Turning it on makes the service account
 * `cn=<id>,ou=services,<base>` a password, shown once in that answer (`ldapPassword`) and kept as
 * its SHA-256; turning it off removes it. `POST /api/admin/applications/:id/ldap/password` makes a
 * new one (`rotateLdapPassword`). Registered by the plugin (plugin.ts).
 */
import { eq } from 'drizzle-orm';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { applications, type LdapSettings } from '../db/schema.js';
import { exec, transaction } from '../db/store.js';
import { conflict } from '../http/problem.js';
import { recordAudit } from '../audit/record.js';
import { randomToken, sha256 } from '../util/crypto.js';
import { getApplication } from '../applications/lookup.js';
import type { ApplicationField } from '../plugin-api/application-fields.js';
import { applicationBindDn, type TreeConfig } from './tree.js';

const LDAP_TEXT =
  'LDAP directory access (docs/ldap.md): when enabled, the service account cn=<id>,ou=services,<base> may search this application\'s active members and the groups, and members bind with app passwords. Turning it on answers a new service-account password (ldapPassword) once; turning it off removes it.';
const LdapPatch = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false, description: LDAP_TEXT });
const LdapRecord = Type.Object(
  {
    enabled: Type.Boolean(),
    bindDn: Type.String({ description: 'The service account\'s bind DN' }),
  },
  { additionalProperties: false, description: LDAP_TEXT },
);

/** POST .../ldap/password: the service account's new password, shown once. */
export const LdapPasswordSchema = Type.Object(
  { bindDn: Type.String(), password: Type.String({ description: 'shown only in this answer' }) },
  { additionalProperties: false },
);

declare module '../plugin-api/application-fields.js' {
  interface ApplicationFieldInputs {
    ldap: LdapSettings;
  }
  interface ApplicationFieldRecords {
    ldap: LdapSettings & { bindDn: string };
  }
}

/** An LDAP service account's password (spec ldap.md): 256 random bits, stored as SHA-256. */
export function newLdapPassword(): string {
  return randomToken('ghl_');
}

/** `ldap` as an application field: after `signingAlg` in the bodies and the record. */
export function ldapField(config: TreeConfig): ApplicationField<LdapSettings> {
  return {
    name: 'ldap',
    after: 'signingAlg',
    input: LdapPatch,
    record: LdapRecord,
    secrets: { ldapPassword: Type.String({ description: 'The LDAP service account\'s new password, in the answer that turned LDAP on (only there)' }) },
    toRecord: (app) => ({ enabled: app.ldap.enabled, bindDn: applicationBindDn(config, app.id) }),
    prepare({ given, current }) {
      const enabled = (given ?? current?.ldap ?? { enabled: false }).enabled;
      // Turned on: a new service-account password, shown in this answer; turned off: none.
      const password = enabled && !current?.ldap.enabled ? newLdapPassword() : undefined;
      const ldapPasswordHash = !enabled ? null : password ? sha256(password) : (current?.ldapPasswordHash ?? null);
      if (!current && !enabled) return { columns: { ldap: { enabled: false }, ldapPasswordHash: null } };
      return {
        columns: { ldap: { enabled }, ldapPasswordHash },
        ...(password ? { secrets: { ldapPassword: password } } : {}),
        ...(password && current ? { audit: { ldapPasswordIssued: true } } : {}),
      };
    },
    keyMayNot: (current, given) =>
      given.enabled !== current.ldap.enabled ? 'turn LDAP on or off (it opens the directory to a service account and to app passwords)' : undefined,
    derived: { bindDn: 'derived from the application\'s id and the LDAP base' },
  };
}

/**
 * A new password for the application's LDAP service account (spec ldap.md): the old one stops
 * binding at once. Refused (409 `ldap_not_enabled`) while LDAP is off for the application.
 */
export async function rotateLdapPassword(ctx: AppContext, id: string, actor: string) {
  const app = await getApplication(ctx, id);
  if (!app.ldap.enabled) {
    throw conflict('ldap_not_enabled', `Application "${id}" does not have LDAP on; turn it on (PATCH {"ldap": {"enabled": true}}) first.`);
  }
  const password = newLdapPassword();
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.update(applications).set({ ldapPasswordHash: sha256(password), updatedAt: now }).where(eq(applications.id, id)));
    await recordAudit(tx, now, { actor, action: 'application.ldap_password_rotated', applicationId: id, target: id });
  });
  return { bindDn: applicationBindDn(ctx.config, id), password };
}
