/**
 * Changing a person (spec claims-and-groups.md, "People"): one function for every caller, so the
 * rules live once. An administrator (`PATCH /api/admin/people/:id`) may change the status
 * (issue 33: manage.ts `setPersonStatus`, in the same transaction), the username, names and
 * `emailVerified`; the person (`PATCH /api/me`, the account page) their names only — each route's
 * schema says which fields it takes.
 *
 * - `username`: compared and stored lower-case, `^[a-z0-9][a-z0-9._-]{0,63}$`, unique (409
 *   `username_taken`).
 * - `name` (≤ 200), `givenName`, `familyName` (≤ 100): display text (the schemas check it);
 *   blank or null clears.
 * A change that changes nothing writes nothing; a change is audited (`person.updated`, with the
 * fields that moved) and reaches the webhooks of the applications the person is an active member
 * of (`person.updated`, webhooks/outbox.ts).
 */
import type { AppContext } from '../context.js';
import type { Person, PersonStatus } from '../db/schema.js';
import { setPersonStatus } from './manage.js';
import { recordAudit } from '../audit/record.js';
import { managedBySource, notFound, validationFailed, type FieldError } from '../http/problem.js';
import { displayTextProblem } from '../util/display-text.js';
import { recordPersonEvent } from '../webhooks/outbox.js';
import { transaction } from '../db/store.js';
import { findPersonRow, updatePersonRow } from './queries.js';
import { parseUsername, takenUsernames, usernameTaken } from './username.js';
import { guardPerson } from '../plugin-api/registries.js';

export interface PersonPatch {
  status?: PersonStatus | undefined;
  username?: string | undefined;
  name?: string | null | undefined;
  givenName?: string | null | undefined;
  familyName?: string | null | undefined;
  emailVerified?: boolean | undefined;
}

/** Longest names, in characters: `name` as at sign-up, the OIDC parts shorter. */
export const NAME_LIMITS = { name: 200, givenName: 100, familyName: 100 } as const;

/**
 * The name rules, also here (not only in the JSON schemas): the account page's form arrives
 * unchecked. Paths name the JSON field (`body.givenName`).
 */
function nameErrors(patch: PersonPatch): FieldError[] {
  const errors: FieldError[] = [];
  for (const key of Object.keys(NAME_LIMITS) as Array<keyof typeof NAME_LIMITS>) {
    const value = patch[key]?.trim();
    if (!value) continue;
    const problem = Array.from(value).length > NAME_LIMITS[key] ? `must be at most ${NAME_LIMITS[key]} characters` : displayTextProblem(value);
    if (problem) errors.push({ path: `body.${key}`, message: problem });
  }
  return errors;
}

/**
 * A person a directory source keeps (`sourceId`, spec directory-sources.md): their username and
 * names come from the source and change there (409 `managed_by_source`); their status and
 * `emailVerified` stay Gatehouse's.
 */
function refuseSourceFields(current: Person, patch: PersonPatch): void {
  const fields = (['username', 'name', 'givenName', 'familyName'] as const).filter((k) => patch[k] !== undefined && (patch[k] ?? null) !== current[k]);
  if (fields.length) throw managedBySource(`${current.email}'s ${fields.join(', ')} come from their directory source; change them there.`);
}

/** Blank text clears an optional name. */
const text = (value: string | null | undefined, current: string | null) => (value === undefined ? current : value?.trim() || null);

/** What `person.updated` events carry. */
export function personEventData(p: Person, changed: string[]) {
  return {
    userId: p.id, email: p.email, username: p.username, emailVerified: p.emailVerified,
    name: p.name, givenName: p.givenName, familyName: p.familyName, changed,
  };
}

/** Applies `patch` to person `id` (see the module comment); returns the person as stored. */
export async function updatePerson(ctx: AppContext, id: string, patch: PersonPatch, actor: string): Promise<Person> {
  const username = patch.username === undefined ? undefined : parseUsername(patch.username);
  const errors = nameErrors(patch);
  if (errors.length) throw validationFailed(errors, 'The name is not valid.');
  const now = ctx.clock.now();
  let changed: string[] = [];
  const person = await transaction(ctx.db, async (tx) => {
    const current = await findPersonRow(tx, id);
    if (!current) throw notFound('person_not_found', `There is no person with id "${id}".`);
    const fields = Object.keys(patch).filter((key) => key !== 'status');
    // A plugin may keep some of a person's fields (a directory source: 409 managed_by_source).
    if (fields.length) await guardPerson(ctx.registries, tx, current, { kind: 'update', fields }, actor);
    // Its own audit entry (person.enabled / person.disabled) and effects; joins this transaction.
    if (current.sourceId !== null) refuseSourceFields(current, patch);
    if (patch.status !== undefined) await setPersonStatus(ctx, id, patch.status, actor);
    const next: Person = {
      ...current,
      username: username ?? current.username,
      name: text(patch.name, current.name),
      givenName: text(patch.givenName, current.givenName),
      familyName: text(patch.familyName, current.familyName),
      emailVerified: patch.emailVerified ?? current.emailVerified,
    };
    changed = (['username', 'name', 'givenName', 'familyName', 'emailVerified'] as const).filter((key) => next[key] !== current[key]);
    if (changed.length === 0) return (await findPersonRow(tx, id))!;
    if (next.username !== current.username && (await takenUsernames(tx, [next.username])).size > 0) throw usernameTaken(next.username);
    next.updatedAt = now;
    await updatePersonRow(tx, id, {
      username: next.username, name: next.name, givenName: next.givenName, familyName: next.familyName,
      emailVerified: next.emailVerified, updatedAt: now,
    });
    await recordAudit(tx, now, {
      actor, action: 'person.updated', target: id,
      details: {
        changed,
        ...(changed.includes('username') ? { username: { from: current.username, to: next.username } } : {}),
        ...(changed.includes('emailVerified') ? { emailVerified: next.emailVerified } : {}),
      },
    });
    await recordPersonEvent(tx, now, id, 'person.updated', personEventData(next, changed));
    return next;
  });
  if (changed.length > 0) ctx.wakeWebhooks();
  return person;
}
