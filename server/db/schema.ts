/**
 * The whole Gatehouse data model, one module per area under schema/, exported here as one
 * (every query imports `db/schema.js`; PostgreSQL's `pg-schema.ts` and drizzle-kit read it too).
 *
 * Conventions: ids are prefixed random strings (see `server/util/ids.ts`), timestamps are
 * integer milliseconds mapped to `Date`, JSON columns are typed with `$type<>()`, and every
 * secret is stored as a SHA-256 hex hash (`*Hash` columns), never in the clear. The one
 * exception is the webhook secret, which must be usable as an HMAC key; it is never returned
 * by any read. Indexes sit next to their table and are chosen for the keyset pagination
 * `(created, id)` used by every admin list.
 */
export * from './schema/types.js';
export * from './schema/people.js';
export * from './schema/second-factors.js';
export * from './schema/applications.js';
export * from './schema/sessions.js';
export * from './schema/groups.js';
export * from './schema/administrators.js';
export * from './schema/oauth.js';
export * from './schema/outbox-and-audit.js';
export * from './schema/installation.js';
export * from './schema/forward-auth.js';
export * from './schema/app-passwords.js';
export * from './schema/radius.js';
export * from './schema/directory-sources.js';
export * from './schema/saml.js';
