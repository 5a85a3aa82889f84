/**
 * The control panel's own OAuth client (spec administrators-and-people.md, "Signing in to the
 * panel"): a public client (`spa`, code + PKCE) answered by the same hosted pages as any
 * application, whose policy requires a second factor (second-factor.md, step-up and enrolment),
 * and whose tokens carry the audience `PANEL_AUDIENCE`, which only the admin API accepts
 * (panel-access.ts).
 *
 * It is a row in `applications` (codes, sessions, refresh-token families and back-channel logout
 * all hang off application rows), with an id outside the pattern the admin API accepts for new
 * applications, so it can never be created, edited or deleted through it; admin-auth.ts answers
 * 404 for it, lists leave it out. The row is written when the first administrator appears and
 * rewritten at every start while administrators exist, so a hand edit (or a changed issuer) never
 * sticks: its settings live here, not in the database.
 */
import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { applications, type Application, type AuthPolicy, type GrantType } from '../db/schema.js';
import { exec } from '../db/store.js';

import { PANEL_CLIENT_ID } from '../http/schemas.js';

/** Not a valid application id for the admin API (`^[a-z0-9]…`): nothing can collide with it. */
export { PANEL_CLIENT_ID };
/** The `aud` of panel access tokens. */
export const PANEL_AUDIENCE = 'urn:gatehouse:admin-panel';
/** Where the panel's sign-in comes back to (a page of the panel itself). */
export const PANEL_CALLBACK_PATH = '/admin/signed-in';
/** Panel access tokens live at most this long (seconds), whatever GATEHOUSE_ACCESS_TOKEN_TTL says. */
export const PANEL_ACCESS_TOKEN_TTL = 600;

const POLICY: AuthPolicy = { signup_policy: 'closed', allowed_providers: ['email'], profile_fields: [], mfa: 'required' };
const GRANTS: GrantType[] = ['authorization_code', 'refresh_token'];


/** Writes (or restores) the built-in client's row for `issuer`, inside the caller's transaction or not. */
export async function ensurePanelClient(db: Db | Tx, issuer: string, now: Date): Promise<void> {
  const values = {
    name: 'Gatehouse control panel',
    audience: PANEL_AUDIENCE,
    redirectUris: [`${issuer.replace(/\/$/, '')}${PANEL_CALLBACK_PATH}`],
    postLogoutRedirectUris: [`${issuer.replace(/\/$/, '')}/admin/`],
    clientType: 'spa' as Application['clientType'],
    clientSecretHash: null,
    webhookUrl: null,
    webhookSecret: null,
    ssoGroupId: null,
    authPolicy: POLICY,
    grantTypes: GRANTS,
    backchannelLogoutUri: null,
    consent: 'implicit' as const,
    // The OAuth client's own cap (oauth/client-auth.ts `accessTokenTtlOf`).
    accessTokenTtl: PANEL_ACCESS_TOKEN_TTL,
    updatedAt: now,
  };
  await exec(db
    .insert(applications)
    .values({ id: PANEL_CLIENT_ID, createdAt: now, ...values })
    .onConflictDoUpdate({ target: applications.id, set: { ...values, redirectUris: sql`excluded.redirect_uris`, postLogoutRedirectUris: sql`excluded.post_logout_redirect_uris`, authPolicy: sql`excluded.auth_policy`, grantTypes: sql`excluded.grant_types` } }));
}
