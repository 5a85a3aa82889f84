/**
 * The account page's "Security" section (spec second-factor.md, "What people see"): the
 * authenticator app (with the QR code and key while one is being set up), passkeys with rename and
 * remove, recovery codes left, and what each application the person belongs to requires.
 */
import type { AppContext } from '../context.js';
import { passkeysOf, remainingRecoveryCodes, totpOf } from '../accounts/second-factor/store.js';
import { pendingTotpSecret } from '../accounts/second-factor/service.js';
import type { MembershipRow } from '../self-service/queries.js';
import { passkeysUnavailable, totpSetupView } from './second-factor-pages.js';
import type { Translate } from '../i18n/index.js';

/** "2026-11-22 14:03 UTC". */
const when = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

export async function securityView(ctx: AppContext, t: Translate, person: { id: string; email: string }, memberships: MembershipRow[]) {
  const totp = await totpOf(ctx.db, person.id);
  const pending = await pendingTotpSecret(ctx, person.id);
  const keys = await passkeysOf(ctx.db, person.id);
  return {
    totp: {
      enabled: Boolean(totp?.secret),
      confirmedAt: totp?.confirmedAt ? when(totp.confirmedAt) : undefined,
      setup: pending ? totpSetupView(pending, person.email) : undefined,
    },
    passkeys: keys.map((k) => ({
      id: k.id,
      name: k.name,
      createdAt: when(k.createdAt),
      lastUsedAt: k.lastUsedAt ? when(k.lastUsedAt) : undefined,
      backedUp: k.backedUp,
      renameAction: `/account/security/passkeys/${encodeURIComponent(k.id)}/rename`,
      removeAction: `/account/security/passkeys/${encodeURIComponent(k.id)}/remove`,
    })),
    hasSecondFactor: Boolean(totp?.secret) || keys.length > 0,
    recoveryCodesLeft: await remainingRecoveryCodes(ctx.db, person.id),
    passkeyUnavailable: passkeysUnavailable(ctx, t),
    requirements: memberships.map(({ app }) => ({ name: app.name, required: app.authPolicy.mfa === 'required' })),
  };
}
