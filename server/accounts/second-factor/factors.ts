/**
 * What a person's second factors are and what they are worth (spec second-factor.md, "Factors",
 * "Tokens"): a person "has a second factor" with a confirmed TOTP or at least one passkey;
 * recovery codes are offered only next to one. `amr` values follow RFC 8176, and `acr` is
 * `urn:gatehouse:acr:mfa` for a multi-factor sign-in (two factors, or a passkey on its own),
 * `urn:gatehouse:acr:pwd` otherwise.
 */
import { and, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import { engineOf, many, sqlRows } from '../../db/store.js';
import { passkeys, totpCredentials, type Application, type AuthMethod, type Passkey } from '../../db/schema.js';

export const ACR_MFA = 'urn:gatehouse:acr:mfa';
export const ACR_PWD = 'urn:gatehouse:acr:pwd';
export const ACR_VALUES = [ACR_MFA, ACR_PWD] as const;

export type SecondFactorMethod = 'totp' | 'passkey' | 'recovery_code';

/** One statement per sign-in: which factors the person has (prepared once, db/prepared.ts). */
const factorQuery = preparedPerDb((db) =>
  db.$client.prepare<[string, string, string], { totp: number; passkeys: number; codes: number }>(
    `SELECT
       EXISTS (SELECT 1 FROM totp_credentials WHERE person_id = ? AND secret IS NOT NULL) AS totp,
       EXISTS (SELECT 1 FROM passkeys WHERE person_id = ?) AS passkeys,
       EXISTS (SELECT 1 FROM recovery_codes WHERE person_id = ? AND used_at IS NULL) AS codes`,
  ),
);

type FactorRow = { totp: number | boolean; passkeys: number | boolean; codes: number | boolean };

/**
 * The second-step methods the person can use now, in the contract's order. On SQLite the answer
 * comes synchronously (the prepared statement above, the sign-in hot path); on PostgreSQL the
 * same statement as a promise.
 */
export function methodsOf(db: Db, personId: string): SecondFactorMethod[] | Promise<SecondFactorMethod[]> {
  if (engineOf(db) === 'postgres') return factorsOnPostgres(db, personId).then(methodsFrom);
  return methodsFrom(factorQuery(db).get(personId, personId, personId)!);
}

async function factorsOnPostgres(db: Db, personId: string): Promise<FactorRow> {
  const [row] = await sqlRows<FactorRow>(db, sql`SELECT
       EXISTS (SELECT 1 FROM totp_credentials WHERE person_id = ${personId} AND secret IS NOT NULL) AS totp,
       EXISTS (SELECT 1 FROM passkeys WHERE person_id = ${personId}) AS passkeys,
       EXISTS (SELECT 1 FROM recovery_codes WHERE person_id = ${personId} AND used_at IS NULL) AS codes`);
  return row!;
}

function methodsFrom(row: FactorRow): SecondFactorMethod[] {
  if (!row.totp && !row.passkeys) return [];
  return [...(row.totp ? ['totp' as const] : []), ...(row.passkeys ? ['passkey' as const] : []), ...(row.codes ? ['recovery_code' as const] : [])];
}

export const hasSecondFactor = async (db: Db, personId: string) => (await methodsOf(db, personId)).length > 0;

/**
 * Which of these people have a second factor (a confirmed TOTP or a passkey), for a page of a
 * list (at most a few hundred ids): two lookups by person, through the TOTP table's primary key
 * and `passkeys_person_idx`.
 */
export async function peopleWithSecondFactor(db: Db, personIds: string[]): Promise<Set<string>> {
  if (personIds.length === 0) return new Set();
  const totp = await many(db.select({ id: totpCredentials.personId }).from(totpCredentials).where(and(inArray(totpCredentials.personId, personIds), isNotNull(totpCredentials.secret))));
  const keys = await many(db.selectDistinct({ id: passkeys.personId }).from(passkeys).where(inArray(passkeys.personId, personIds)));
  return new Set([...totp, ...keys].map((row) => row.id));
}

export const mfaRequired = (app: Pick<Application, 'authPolicy'> | undefined) => app?.authPolicy.mfa === 'required';

export const isMultiFactor = (amr: readonly AuthMethod[]) => amr.includes('mfa');

export const acrOf = (amr: readonly AuthMethod[]) => (isMultiFactor(amr) ? ACR_MFA : ACR_PWD);

/** A passkey's `amr`: bound to one device (`hwk`) or synced between devices (`swk`). */
export const passkeyMethod = (passkey: Pick<Passkey, 'deviceType'>): AuthMethod => (passkey.deviceType === 'singleDevice' ? 'hwk' : 'swk');

/** The `amr` after a second factor on top of `first` (the first factor's methods). */
export function withSecondFactor(first: readonly AuthMethod[], second: AuthMethod): AuthMethod[] {
  return [...new Set([...first.filter((m) => m !== 'mfa'), second, 'mfa' as const])];
}

/** Whether `acr_values` (space-separated, OIDC Core §3.1.2.1) asks for a multi-factor sign-in only. */
export function acrValuesDemandMfa(acrValues: string | undefined): boolean {
  if (!acrValues) return false;
  const values = acrValues.split(' ').filter(Boolean);
  return values.includes(ACR_MFA) && !values.includes(ACR_PWD);
}
