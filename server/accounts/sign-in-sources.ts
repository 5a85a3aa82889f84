/**
 * Where a person's password lives when not in Gatehouse (an LDAP or Active Directory source,
 * server/directory-sources/): password sign-in asks the first source that `owns` the person to
 * check it instead of the stored hash, and, for a login no one has, asks each source to
 * `discover` a person (creating them when the source knows the login and the password is right).
 * The back-off, second factor and session rules stay the core's. A source that cannot be reached
 * throws a Problem (503 `directory_unavailable`), which is answered as is and not counted as a
 * failed attempt.
 *
 * Interim: the shape of the plugin API's `signInSources` registry (issue 48), kept per app
 * context here until that registry lands on main; then this file goes and the plugin registers
 * there instead.
 */
import type { Person } from '../db/schema.js';

export type PasswordVerdict = 'valid' | 'invalid';

export interface SignInSource {
  name: string;
  owns(person: Person): boolean;
  verify(person: Person, password: string): Promise<PasswordVerdict>;
  discover?(login: string, password: string): Promise<Person | undefined>;
}

const sources = new WeakMap<object, SignInSource[]>();

/** Registers a sign-in source on an app context (a plugin's set-up). */
export function addSignInSource(ctx: object, source: SignInSource): void {
  const list = sources.get(ctx) ?? [];
  if (list.some((s) => s.name === source.name)) throw new Error(`sign-in source "${source.name}" is registered twice`);
  list.push(source);
  sources.set(ctx, list);
}

export function signInSourcesOf(ctx: object): readonly SignInSource[] {
  return sources.get(ctx) ?? [];
}
