/**
 * What an API key with `application:write` may not do to its own application (DESIGN §4.7):
 * anything that would reach past its scopes through a field of the application record.
 *
 * - `ssoGroupId`: moving the application into a group is SSO-group management (admin only), and
 *   would let people signed in to the group's other applications in silently.
 * - `clientType`: switching to `web` mints a client secret, which keys may not rotate or see.
 * - Deleting the application deletes its API keys too: key management (admin only).
 * - `webhookUrl` / `webhookSecret`: where membership events go is the `webhooks:write` scope, and
 *   so are `backchannelLogoutUri` / `backchannelLogoutSessionRequired` (where logout tokens go).
 * - `redirectUris`, `postLogoutRedirectUris` and `audience` (issue 22): they decide who receives credentials. A key that
 *   could add its own redirect URI would get a signed-in member's code without any prompt from a
 *   crafted authorize link; a key that could change the audience would mint tokens another API
 *   accepts. Admin only, rather than a scope of their own: an application's back end has no
 *   business moving its own sign-in targets, and a scope would be one more thing to explain.
 * - `grantTypes` (issue 24): turning on `client_credentials` or device sign-in changes who can
 *   obtain tokens for the application (machines with its secret, any device that shows a code):
 *   admin only, for the same reason.
 * - The fields plugins add (plugin-api/application-fields.ts `keyMayNot`) say the same for theirs:
 *   `ldap` and its service-account password (issue 35: LDAP opens the directory to whoever holds
 *   that password, and lets members bind with app passwords: ldap/application-field.ts), and
 *   `forwardAuth` (issue 34: its hosts are where signed-in people's site cookies are handed over,
 *   and its groups who passes: forward-auth/settings.ts), admin only, like redirect URIs.
 * - Loosening how members sign in (issue 36 audit): MFA policy `required` → `optional` (through
 *   PATCH of the application or of its auth policy), and consent `explicit` → `implicit`. The
 *   administrator set the bar; a leaked key must not lower it. Raising it stays open to the key.
 * A key may change `signingAlg` (issue 38): it decides how the application's tokens are signed, not
 * who obtains them, and the application's back end is what must be able to verify them.
 */
import type { AppContext } from '../context.js';
import { requireActorScope, requireOwner, type Actor } from '../http/admin-auth.js';
import type { Application } from '../db/schema.js';
import type { ApplicationPatch, AuthPolicyPatch } from './schemas.js';
import { sameRedirectUris } from './redirect-uris.js';

export function requireMayPatch(ctx: Pick<AppContext, 'registries'>, actor: Actor, current: Application, patch: ApplicationPatch): void {
  if (patch.redirectUris !== undefined && !sameRedirectUris(patch.redirectUris, current.redirectUris)) {
    requireActorScope(actor, undefined, 'change where sign-ins are sent (redirect URIs)');
  }
  if (patch.postLogoutRedirectUris !== undefined && !sameRedirectUris(patch.postLogoutRedirectUris, current.postLogoutRedirectUris)) {
    requireActorScope(actor, undefined, 'change where sign-outs are sent (post-logout redirect URIs)');
  }
  if (patch.audience !== undefined && patch.audience !== current.audience) {
    requireActorScope(actor, undefined, 'change the audience of its tokens');
  }
  if (patch.ssoGroupId !== undefined && patch.ssoGroupId !== current.ssoGroupId) {
    // SSO groups span applications: an app manager's reach ends at their own (owner only).
    requireOwner(actor, 'move an application between SSO groups');
  }
  if (patch.clientType !== undefined && patch.clientType !== current.clientType) {
    requireActorScope(actor, undefined, 'change the client type (it creates or removes the client secret)');
  }
  // A secret sent is always a change (it is never read back); a URL only when it differs.
  if ((patch.webhookUrl !== undefined && patch.webhookUrl !== current.webhookUrl) || patch.webhookSecret !== undefined) {
    requireActorScope(actor, 'webhooks:write', 'change the webhook settings');
  }
  if (
    (patch.backchannelLogoutUri !== undefined && patch.backchannelLogoutUri !== current.backchannelLogoutUri) ||
    (patch.backchannelLogoutSessionRequired !== undefined && patch.backchannelLogoutSessionRequired !== current.backchannelLogoutSessionRequired)
  ) {
    requireActorScope(actor, 'webhooks:write', 'change the back-channel logout settings');
  }
  // The plugins' fields: each says what only an administrator may change through it (plugin-api/application-fields.ts).
  for (const field of ctx.registries.applicationFields.all) {
    const given = (patch as Record<string, unknown>)[field.name];
    const what = given === undefined ? undefined : field.keyMayNot?.(current, given as never);
    if (what) requireActorScope(actor, undefined, what);
  }
  if (patch.grantTypes !== undefined && !sameSet(patch.grantTypes, current.grantTypes)) {
    requireActorScope(actor, undefined, 'change the grant types (they decide who can obtain tokens)');
  }
  if (patch.authPolicy) requireMayPatchAuthPolicy(actor, current, patch.authPolicy);
  if (patch.consent === 'implicit' && current.consent === 'explicit') {
    requireActorScope(actor, undefined, 'turn explicit consent into implicit consent');
  }
}

/** PATCH .../auth-policy, and the `authPolicy` of PATCH .../applications/:id. */
export function requireMayPatchAuthPolicy(actor: Actor, current: Application, patch: AuthPolicyPatch): void {
  if (patch.mfa === 'optional' && current.authPolicy.mfa === 'required') {
    requireActorScope(actor, undefined, 'let members sign in without a second factor (MFA policy optional)');
  }
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));

export function requireMayDelete(actor: Actor): void {
  requireActorScope(actor, undefined, 'delete an application (that deletes its API keys)');
}
