/**
 * E-mail and password sign-up (DESIGN §4.8): allowed for an application whose policy is `open`,
 * or with a valid pending invitation addressed to the same e-mail (the person joins with the
 * invitation's role, and starts verified when the invitation was e-mailed: invitations/accept.ts). Creates the person, their
 * `credential` linked account, the membership and a session with the application's realm.
 */
import { eq } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { linkedAccounts, people, type Application, type Invitation, type Person } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { conflict, forbidden, validationFailed } from '../http/problem.js';
import { newId } from '../util/ids.js';
import { displayTextProblem } from '../util/display-text.js';
import { isEmailAddress } from '../util/email.js';
import { createMembership } from '../members/create.js';
import { usernameForNewPerson } from '../people/username.js';
import { acceptInvitation, invitationByToken, invitationStatus } from '../invitations/accept.js';
import { checkPasswordLength, hashPassword } from './passwords.js';
import { checkNewPassword } from './password-policy.js';
import { applicationForEmailSignIn, findPersonByEmail, normalizeEmail, startSession, type ClientInfo } from './people.js';
import type { SignedIn } from './sign-in.js';
import { exec, one, transaction } from '../db/store.js';

export interface SignUpInput {
  email: string;
  password: string;
  name?: string | undefined;
  applicationId?: string | undefined;
  invitationToken?: string | undefined;
}

const notAllowed = (detail: string) => forbidden('signup_not_allowed', detail);
const emailInUse = () => conflict('email_in_use', 'An account with this e-mail address already exists; sign in instead.');

/** Which application the sign-up joins, and through which invitation if any; throws when not allowed. */
async function admission(ctx: AppContext, input: SignUpInput, email: string): Promise<{ app: Application; invitation?: Invitation }> {
  if (input.invitationToken !== undefined) {
    const invitation = await invitationByToken(ctx.db, input.invitationToken);
    if (!invitation || invitationStatus(invitation, ctx.clock.now()) !== 'pending' || invitation.email !== email) {
      throw notAllowed('The invitation is not valid for this e-mail address.');
    }
    if (input.applicationId !== undefined && input.applicationId !== invitation.applicationId) {
      throw notAllowed('The invitation is for another application.');
    }
    const app = await applicationForEmailSignIn(ctx, invitation.applicationId);
    // `closed` means no new members (DESIGN §4.4), invited or not.
    if (app.authPolicy.signup_policy === 'closed') throw notAllowed(`${app.name} does not accept new members.`);
    return { app, invitation };
  }
  if (input.applicationId === undefined) {
    throw notAllowed('Signing up needs an application that accepts new members, or an invitation.');
  }
  const app = await applicationForEmailSignIn(ctx, input.applicationId);
  if (app.authPolicy.signup_policy !== 'open') throw notAllowed(`${app.name} does not accept sign-ups.`);
  return { app };
}

export async function signUpWithEmail(ctx: AppContext, input: SignUpInput, client: ClientInfo): Promise<SignedIn> {
  const email = normalizeEmail(input.email);
  // The JSON schema checks this too; the hosted form arrives here unchecked.
  if (!isEmailAddress(email)) {
    throw validationFailed([{ path: 'body.email', message: 'must be an e-mail address' }], 'The e-mail address is not valid.');
  }
  checkPasswordLength(input.password);
  await checkNewPassword(ctx.db, input.password, { userInputs: [email, input.name] });
  // Shown to administrators and in the audit log (util/display-text.ts); the hosted form arrives unchecked.
  const nameProblem = input.name === undefined ? undefined : displayTextProblem(input.name);
  if (nameProblem) throw validationFailed([{ path: 'body.name', message: nameProblem }], 'The name is not valid.');
  const { app, invitation } = await admission(ctx, input, email);
  if (await findPersonByEmail(ctx.db, email)) throw emailInUse();
  const passwordHash = await hashPassword(input.password);
  const now = ctx.clock.now();
  try {
    const result = await transaction(ctx.db, async (tx) => {
      const person: Person = await one(tx
        .insert(people)
        .values({ id: newId('usr'), email, username: await usernameForNewPerson(tx, email), name: input.name?.trim() || null, passwordHash, createdAt: now, updatedAt: now })
        .returning());
      await exec(tx.insert(linkedAccounts)
        .values({ id: newId('acc'), personId: person.id, provider: 'credential', providerAccountId: person.id, email, linkedAt: now }));
      if (invitation) {
        // Re-read inside the transaction: a concurrent acceptance or revocation wins.
        const fresh = await invitationByToken(tx, input.invitationToken!);
        if (!fresh || invitationStatus(fresh, now) !== 'pending') throw notAllowed('The invitation is no longer pending.');
        await acceptInvitation(tx, now, fresh, person);
      } else {
        await createMembership(tx, now, app.id, person);
      }
      await recordAudit(tx, now, { actor: `person:${person.id}`, action: 'person.signed_up', applicationId: app.id, target: person.id });
      const started = await startSession(ctx, now, person, app, client, ['pwd']);
      const saved = (await one(tx.select().from(people).where(eq(people.id, person.id))))!;
      return { person: saved, ...started };
    });
    ctx.wakeWebhooks();
    return result;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw emailInUse();
    throw error;
  }
}
