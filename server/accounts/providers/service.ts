/**
 * What happens once an external provider has told us who signed in (DESIGN §4.9):
 *
 * a) the identity is linked to a person → that person is signed in;
 * b) it is not, but its e-mail belongs to a person → nothing is linked yet: the person must first
 *    prove the account is theirs (its password, or another method already linked to it);
 * c) otherwise a person is created (e-mail verified as the provider says) with the linked
 *    account, under the same admission rule as e-mail sign-up: an `open` application, or a pending
 *    invitation of that verified e-mail; anything else is `signup_not_allowed`.
 *
 * A login started from the account page (`linkPersonId`) links the identity to that person.
 * Sign-in itself is the one of e-mail sign-in (`signInPerson`: session, realm, activity).
 */
import { and, eq } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/client.js';
import { recordAudit } from '../../audit/record.js';
import { linkedAccounts, people, type Application, type ExternalIdentity, type Person } from '../../db/schema.js';
import { Problem, conflict, forbidden } from '../../http/problem.js';
import { newId } from '../../util/ids.js';
import { cleanDisplayText } from '../../util/display-text.js';
import { admitNewcomer } from '../membership.js';
import { findPersonByEmail, type ClientInfo } from '../people.js';
import { signInPerson, type SignedIn } from '../sign-in.js';
import { methodsOf, mfaRequired } from '../second-factor/factors.js';
import { sessionAmr } from '../session.js';
import { safeReturnTo } from '../../pages/sign-in-pages.js';
import { holdForProof, type ProviderLogin } from './logins.js';
import { usernameForNewPerson } from '../../people/username.js';
import { exec, one, transaction } from '../../db/store.js';
import { findApplication } from '../../applications/lookup.js';

/**
 * The name an external provider vouches for, made safe to show (util/display-text.ts): cleaned
 * rather than refused, since the person cannot change what their provider sends.
 */
function providerName(name: string | null): string | null {
  const cleaned = name === null ? '' : Array.from(cleanDisplayText(name)).slice(0, 200).join('').trim();
  return cleaned || null;
}

export type Outcome =
  | { kind: 'signed_in'; signedIn: SignedIn; returnTo: string }
  /** The person has a second factor, or the application requires one: the second step comes first. */
  | { kind: 'second_factor'; person: Person; app: Application | undefined; returnTo: string }
  | { kind: 'linked' }
  | { kind: 'needs_proof'; secret: string };

/** The application a login is for, re-checked at the callback: it must still allow the provider. */
export async function loginApplication(ctx: AppContext, applicationId: string | null, provider: string, providerName: string): Promise<Application | undefined> {
  if (!applicationId) return undefined;
  const app = await findApplication(ctx.db, applicationId);
  if (!app) throw new Problem(404, 'application_not_found', 'The application you were signing in to no longer exists.');
  if (!app.authPolicy.allowed_providers.includes(provider)) {
    throw forbidden('provider_not_allowed', `${app.name} does not allow signing in with ${providerName}.`);
  }
  return app;
}

async function linkedPerson(tx: Tx, provider: string, providerAccountId: string): Promise<Person | undefined> {
  return (await one(tx
    .select({ person: people })
    .from(linkedAccounts)
    .innerJoin(people, eq(people.id, linkedAccounts.personId))
    .where(and(eq(linkedAccounts.provider, provider), eq(linkedAccounts.providerAccountId, providerAccountId)))))?.person;
}

/**
 * Links `identity` to `person` inside the caller's transaction. Already linked to them → nothing
 * to do; linked to someone else → 409 `provider_account_in_use`; the person already has another
 * account of this provider → 409 `provider_already_linked`.
 */
export async function linkIdentity(tx: Tx, now: Date, person: Person, provider: string, providerName: string, identity: ExternalIdentity): Promise<void> {
  const owner = await linkedPerson(tx, provider, identity.providerAccountId);
  if (owner?.id === person.id) return;
  if (owner) throw conflict('provider_account_in_use', `This ${providerName} account is already linked to another Gatehouse account.`);
  const other = await one(tx
    .select({ id: linkedAccounts.id })
    .from(linkedAccounts)
    .where(and(eq(linkedAccounts.personId, person.id), eq(linkedAccounts.provider, provider))));
  if (other) throw conflict('provider_already_linked', `Another ${providerName} account is already linked to yours; remove it on your account page first.`);
  await exec(tx.insert(linkedAccounts)
    .values({ id: newId('acc'), personId: person.id, provider, providerAccountId: identity.providerAccountId, email: identity.email ?? '', linkedAt: now }));
  // The provider vouches for the same address the person registered with: it is verified now.
  if (identity.emailVerified && identity.email === person.email && !person.emailVerified) {
    await exec(tx.update(people).set({ emailVerified: true, updatedAt: now }).where(eq(people.id, person.id)));
  }
  await recordAudit(tx, now, { actor: `person:${person.id}`, action: 'person.account_linked', target: person.id, details: { provider } });
}

/** Decides a/b/c (or the account-page link) for an identity the provider confirmed. */
export async function completeLogin(
  ctx: AppContext,
  login: ProviderLogin,
  identity: ExternalIdentity,
  providerName: string,
  client: ClientInfo & { personId?: string | undefined },
): Promise<Outcome> {
  const now = ctx.clock.now();
  const returnTo = storedReturnTo(ctx, login);

  if (login.linkPersonId) {
    if (client.personId !== login.linkPersonId) {
      throw forbidden('link_session_changed', 'You are no longer signed in as the person who started linking. Sign in and try again.');
    }
    await transaction(ctx.db, async (tx) => {
      const person = await one(tx.select().from(people).where(eq(people.id, login.linkPersonId!)));
      if (!person) throw forbidden('link_session_changed', 'Your account no longer exists.');
      await linkIdentity(tx, now, person, login.provider, providerName, identity);
    });
    return { kind: 'linked' };
  }

  const app = await loginApplication(ctx, login.applicationId, login.provider, providerName);
  const linked = await linkedPerson(ctx.db, login.provider, identity.providerAccountId);
  if (linked) {
    if ((await methodsOf(ctx.db, linked.id)).length > 0 || mfaRequired(app)) {
      ctx.metrics.signIn('second_factor_required', 'external');
      return { kind: 'second_factor', person: linked, app, returnTo };
    }
    const started = await transaction(ctx.db, async () => signInPerson(ctx, now, linked, app, client, ['fed']));
    if (app) ctx.wakeWebhooks();
    ctx.metrics.signIn('success', 'external');
    return { kind: 'signed_in', signedIn: { person: linked, ...started }, returnTo };
  }

  if (!identity.email) {
    throw new Problem(400, 'provider_email_missing', `${providerName} did not share an e-mail address, which Gatehouse needs to create your account.`);
  }
  const existing = await findPersonByEmail(ctx.db, identity.email);
  if (existing) return { kind: 'needs_proof', secret: await holdForProof(ctx, login, existing.id, identity) };

  const signedIn = await createPerson(ctx, app, login.provider, identity, client);
  return { kind: 'signed_in', signedIn, returnTo };
}

const signupNotAllowed = (detail: string) => forbidden('signup_not_allowed', detail);

/** Case c: a new person, their linked account and membership, and a session — or nothing at all. */
async function createPerson(ctx: AppContext, app: Application | undefined, provider: string, identity: ExternalIdentity, client: ClientInfo): Promise<SignedIn> {
  if (!app) throw signupNotAllowed('Signing up needs an application that accepts new members, or an invitation.');
  const now = ctx.clock.now();
  const email = identity.email!;
  let result: SignedIn;
  try {
    result = await transaction(ctx.db, async (tx) => {
      const person: Person = await one(tx
        .insert(people)
        .values({ id: newId('usr'), email, username: await usernameForNewPerson(tx, email), emailVerified: identity.emailVerified, name: providerName(identity.name), createdAt: now, updatedAt: now })
        .returning());
      await exec(tx.insert(linkedAccounts)
        .values({ id: newId('acc'), personId: person.id, provider, providerAccountId: identity.providerAccountId, email, linkedAt: now }));
      // Throwing rolls the person back: a refused sign-up leaves nothing behind.
      const admitted = await admitNewcomer(tx, now, app, person);
      if ('error' in admitted) throw signupNotAllowed(admitted.description);
      await recordAudit(tx, now, { actor: `person:${person.id}`, action: 'person.signed_up', applicationId: app.id, target: person.id, details: { provider } });
      const started = await signInPerson(ctx, now, person, app, client, ['fed']);
      const saved = (await one(tx.select().from(people).where(eq(people.id, person.id))))!;
      return { person: saved, ...started };
    });
  } catch (error) {
    // Someone took the e-mail address between the check and the insert.
    if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
      throw conflict('email_in_use', 'An account with this e-mail address was just created; sign in to it and link from your account page.');
    }
    throw error;
  }
  ctx.wakeWebhooks();
  ctx.metrics.signIn('success', 'external');
  return result;
}

/**
 * Case b, once the person has proven the account is theirs by signing in (`signedIn`): links the
 * identity waiting in `pending` and signs them in for the application the login was for, on the
 * session the proof created or kept (`client.currentToken` is that session's cookie).
 */
export async function finishPendingLink(
  ctx: AppContext,
  pending: ProviderLogin & { identity: ExternalIdentity },
  providerName: string,
  signedIn: SignedIn,
  client: ClientInfo,
): Promise<string> {
  const now = ctx.clock.now();
  const app = await loginApplication(ctx, pending.applicationId, pending.provider, providerName);
  const session = { ...client, currentToken: signedIn.token ?? client.currentToken };
  await transaction(ctx.db, async (tx) => {
    await linkIdentity(tx, now, signedIn.person, pending.provider, providerName, pending.identity);
    await signInPerson(ctx, now, signedIn.person, app, session, await sessionAmr(ctx.db, signedIn.sessionId));
  });
  if (app) ctx.wakeWebhooks();
  return storedReturnTo(ctx, pending);
}

/**
 * Where a login goes once done. Checked again as it leaves the store, not only when it was
 * stored: a row written by an earlier version (with a laxer check) must not become a header
 * Node refuses to write.
 */
function storedReturnTo(ctx: AppContext, login: Pick<ProviderLogin, 'returnTo'>): string {
  return safeReturnTo(ctx, login.returnTo ?? undefined);
}
