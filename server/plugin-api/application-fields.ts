/**
 * Application fields that plugins add to the application record (`forwardAuth`, `ldap`; next
 * `saml`, `radius`): each brings its wire schemas, its rules, what it writes, the secrets it shows
 * once and what an API key may not change. The applications feature builds its create, PATCH and
 * record schemas from the core fields and these (applications/schemas.ts `applicationSchemas`),
 * calls `prepare` on every create and update, and answers `record` in every application record,
 * so the admin API, the OpenAPI document, configuration as code and the panel's types all see
 * the field without the core naming it.
 *
 * Where a field stands: `after` names the field it follows, in the bodies and in the record, so
 * adding one never reorders the others (the OpenAPI document stays as it was).
 *
 * Storage: a field keeps its value in columns of the application row (the row's columns are
 * declared with the data model, server/db/), in a table of its own read by `load` (one query for
 * every application of an answer), or both. Its side tables (forward auth's hosts) are written in
 * `written`, inside the create's or update's transaction, and freed in `deleted`.
 */
import type { TSchema } from 'typebox';
import type { Db, Tx } from '../db/client.js';
import type { Application, ClientType, ProfileField, applications } from '../db/schema.js';
import type { FieldError } from '../http/problem.js';

/**
 * Each plugin field's value in create and PATCH bodies, and in the record, by name. Empty here: a
 * plugin adds its own by declaration merging (`declare module '../plugin-api/application-fields.js'`
 * beside its field), so the applications feature's types (`ApplicationCreate`, `ApplicationPatch`)
 * know every field without naming a plugin.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ApplicationFieldInputs {}
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ApplicationFieldRecords {}

export type ApplicationColumns = Partial<Omit<typeof applications.$inferInsert, 'id' | 'createdAt'>>;

/** What a field is asked to check and prepare, on a create (`current` undefined) or an update. */
export interface ApplicationFieldChange<Input = unknown> {
  /** The application's id. */
  id: string;
  /** The field's value in the request; undefined when the body leaves it out. */
  given: Input | undefined;
  /** The row before this change; undefined on create. */
  current: Application | undefined;
  /** The client type the application will have. */
  clientType: ClientType;
  /** The profile fields the application will have (its auth policy after this change): claim sources name them. */
  profileFields: ProfileField[];
  /** Add the field's mistakes here (paths `body.<field>…`): every field's are answered together as one 400. */
  errors: FieldError[];
  /**
   * Whether the caller administers that application too: an app manager only theirs; the admin
   * token, owners and configuration files every one (forward auth lets only an administrator of
   * both give two applications overlapping hosts).
   */
  manages: (applicationId: string) => boolean;
}

/** What `manages` answers for a caller who administers every application. */
export const EVERY_APPLICATION = (): boolean => true;

/** What a field writes for one create or update. */
export interface ApplicationFieldWrite {
  /** Columns of the application row. */
  columns?: ApplicationColumns;
  /** Secrets shown once in this answer, by the names declared in `secrets` (a map: one per item, `radiusSecrets` by client name). */
  secrets?: Record<string, string | Record<string, string>>;
  /** Added to the `application.created` / `application.updated` audit entry (names and flags, never a secret). */
  audit?: Record<string, unknown>;
  /** Inside the write's transaction, after the row: the field's own tables. A Problem thrown here refuses the write. */
  written?: (tx: Tx, now: Date) => Promise<void>;
}

export interface ApplicationField<Input = unknown> {
  /** The wire name (`forwardAuth`). */
  name: string;
  /** The field it follows in the bodies and the record. */
  after: string;
  /** The value a create or PATCH body may carry (the core makes it optional). */
  input: TSchema;
  /** The value in the record (always present). */
  record: TSchema;
  /** Secrets the create or PATCH answer may carry once (`ldapPassword`), by name. */
  secrets?: Record<string, TSchema>;
  /** Reads what `record` needs from the field's own tables, for every application of one answer. */
  load?: (db: Db, ids: string[]) => Promise<Map<string, unknown>>;
  /** The record's value: from the row (and what `load` read for it). */
  toRecord(app: Application, loaded: unknown): unknown;
  /**
   * Checks the value (pushing mistakes onto `change.errors`) and says what to write. Called on
   * every create and update, given or not: a field may also police the rest of the change (forward
   * auth keeps a protecting application a web client). Before the write's transaction.
   */
  prepare(change: ApplicationFieldChange<Input>): ApplicationFieldWrite | undefined | Promise<ApplicationFieldWrite | undefined>;
  /** Inside the delete's transaction: frees what the field holds beside the row (its tables are purged with the application otherwise). */
  deleted?: (tx: Tx, id: string, now: Date) => Promise<void>;
  /**
   * What an API key with `application:write` may not do through this field (DESIGN §4.7,
   * applications/key-limits.ts): the action in words ("change the protected hosts") when the
   * PATCH changes what only an administrator may, else undefined.
   */
  keyMayNot?: (current: Application, given: Input) => string | undefined;
  /** Where the field's value is derived, not configured (config-as-code leaves it out of a file): dotted paths under the field, with why. */
  derived?: Record<string, string>;
}

/**
 * Places `extra` entries after the entries they name, keeping every other entry's order: the
 * record's and the bodies' property order with the plugins' fields in it.
 */
export function placeAfter<V>(base: [string, V][], extra: { after: string; entries: [string, V][] }[]): [string, V][] {
  const out = [...base];
  // Two fields after the same one stand in the order they were registered.
  const last = new Map<string, string>();
  for (const { after, entries } of extra) {
    if (!entries.length) continue;
    const anchor = last.get(after) ?? after;
    const at = out.findIndex(([key]) => key === anchor);
    out.splice(at < 0 ? out.length : at + 1, 0, ...entries);
    last.set(after, entries[entries.length - 1]![0]);
  }
  return out;
}
