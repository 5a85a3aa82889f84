/**
 * Creating a person who has not signed up themselves: the first owner at set-up, and people an
 * administrator adds (`POST /api/admin/people`). Inside the caller's transaction: the person row
 * and, with a password, the `credential` sign-in method that sign-up also creates.
 */
import { linkedAccounts, people, type Person } from '../db/schema.js';
import type { Tx } from '../db/client.js';
import { exec, one } from '../db/store.js';
import { conflict } from '../http/problem.js';
import { newId } from '../util/ids.js';
import { findPersonByEmail } from '../accounts/people.js';
import { usernameForNewPerson } from './username.js';

export interface NewPerson {
  email: string;
  name: string | null;
  /** Chosen by the administrator (already checked free); else made from the e-mail (username.ts). */
  username?: string | undefined;
  /** argon2id hash, or null when the person sets a password through an e-mailed link. */
  passwordHash: string | null;
  emailVerified: boolean;
}

export const personExists = (email: string) => conflict('email_in_use', `A person with the e-mail address ${email} already exists.`);

export async function insertPerson(tx: Tx, now: Date, input: NewPerson): Promise<Person> {
  const email = input.email.trim().toLowerCase();
  if (await findPersonByEmail(tx, email)) throw personExists(email);
  const person = await one(tx
    .insert(people)
    .values({ id: newId('usr'), email, username: input.username ?? (await usernameForNewPerson(tx, email)), name: input.name?.trim() || null, emailVerified: input.emailVerified, passwordHash: input.passwordHash, createdAt: now, updatedAt: now })
    .returning());
  if (input.passwordHash) {
    await exec(tx.insert(linkedAccounts).values({ id: newId('acc'), personId: person.id, provider: 'credential', providerAccountId: person.id, email, linkedAt: now }));
  }
  return person;
}
