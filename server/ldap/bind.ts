/**
 * RFC 4511 §4.2 and RFC 4513 §5.1: simple binds (spec ldap.md, "People bind with app passwords").
 *
 * Who may bind:
 * - anonymously (empty name and password): then only the root DSE may be read (search.ts);
 * - an application's service account, `cn=<app id>,ou=services,<base>`, with its password, while
 *   the application has LDAP on;
 * - a person, `uid=<username>,ou=people,<base>` or their e-mail address (or bare username) as the
 *   name, with one of their app passwords (app-passwords/verify.ts): never the account password,
 *   so no second factor is bypassed; and when the application's forward auth names groups, only
 *   while they are in one of them.
 * A name with an empty password is an unauthenticated bind (§5.1.2): unwillingToPerform. SASL is
 * authMethodNotSupported. A password over an unencrypted connection from another machine is
 * refused with confidentialityRequired unless GATEHOUSE_LDAP_ALLOW_PLAIN=1 (§6.3.1 of RFC 4513
 * leaves it to the server; loopback is always fine).
 *
 * Failed binds (spec: "rate-limited per address and per bind name"): each failure counts against
 * the connection's address and against the bind name, whether the name exists or not (a person's
 * name is never looked up before the password is: the secret is, by its hash). An address past
 * its budget is not checked at all. The name's budget is weighed only after the password (issue
 * 49, H4; OWASP's Authentication Cheat Sheet, "Account Lockout": a lockout anyone can trigger is
 * a denial of service): the right password binds even while the name's budget is spent, so
 * nobody can lock a service account or a person out by binding wrongly in their name; a wrong one
 * past either budget answers busy after BUSY_DELAY_MS. Guessing stays hopeless: app passwords
 * and service-account passwords are random (150 and 256 bits), and each address may make
 * BIND_FAILURES_PER_ADDRESS wrong binds a minute. Every failure answered invalidCredentials is
 * audited (`ldap.bind_failed`, no secret) and counted as a failed sign-in for the panel's charts.
 */
import type { AppContext } from '../context.js';
import { recordAudit } from '../audit/record.js';
import { countFailedSignIn } from '../activity/record.js';
import { findApplication } from '../applications/lookup.js';
import { appPasswordStillValid, verifyAppPassword } from '../app-passwords/verify.js';
import { matchesHash, sha256 } from '../util/crypto.js';
import { WindowCounter } from '../util/window-counter.js';
import type { Application } from '../db/schema.js';
import { personPassesGroupRule } from '../applications/group-rule.js';
import { isWithin, parseDn, singleAva, type Dn } from './dn.js';
import { ResultCode, type BindRequest, type ResultFields } from './protocol.js';
import { PEOPLE_OU, SERVICES_OU, personDn, serviceAccountDn } from './tree.js';
import { countBind } from './metrics.js';

/**
 * Who a connection is bound as. A bound identity carries its application's `groupsFilter` as it
 * stands (read again before each operation, `refreshIdentity`): the groups the reader may see
 * (null: all of them), as the `groups` claim does (docs/claims-and-scopes.md).
 */
export type Identity =
  | { kind: 'anonymous' }
  | { kind: 'service'; dn: string; applicationId: string; passwordHash: string; groupsFilter: readonly string[] | null }
  | { kind: 'person'; dn: string; applicationId: string; personId: string; appPasswordId: string; groupsFilter: readonly string[] | null };

export const ANONYMOUS: Identity = { kind: 'anonymous' };

/** Failed binds an address may make per minute, and a bind name per five minutes, before busy. */
export const BIND_FAILURES_PER_ADDRESS = 30;
export const BIND_FAILURES_PER_NAME = 10;
/** How long a refused (busy) bind waits before it is answered. */
export const BUSY_DELAY_MS = 1_000;

/** The bind budgets of one listener (all its connections). */
export class BindLimits {
  readonly byAddress = new WindowCounter(BIND_FAILURES_PER_ADDRESS, 60_000);
  readonly byName = new WindowCounter(BIND_FAILURES_PER_NAME, 5 * 60_000);
}

/** What the connection knows about itself. */
export interface BindChannel {
  address: string;
  /** TLS (LDAPS, or after StartTLS). */
  secure: boolean;
  loopback: boolean;
}

export interface BindOutcome {
  result: ResultFields;
  identity: Identity;
}

/** What a bind name names, before anything is looked up. */
type Named =
  | { kind: 'service'; applicationId: string }
  | { kind: 'person'; login: string }
  | { kind: 'nobody' };

/** Classifies a bind name against the tree under `base`. */
function named(name: string, base: Dn): Named {
  if (!name.includes('=')) return { kind: 'person', login: name.trim() };
  const dn = parseDn(name);
  if (!dn || dn.length !== base.length + 2 || !isWithin(dn, base)) return { kind: 'nobody' };
  const ou = singleAva(dn[1]);
  const leaf = singleAva(dn[0]);
  if (!ou || !leaf || ou.type !== 'ou') return { kind: 'nobody' };
  if (ou.value === PEOPLE_OU && leaf.type === 'uid') return { kind: 'person', login: leaf.value };
  if (ou.value === SERVICES_OU && leaf.type === 'cn') return { kind: 'service', applicationId: leaf.value };
  return { kind: 'nobody' };
}

/** A key for the per-name budget: the name's normal form, so spellings of one name share it. */
function nameKey(name: string): string {
  return sha256(name.trim().toLowerCase());
}

/** A stored hash nobody's password has: compared against when there is no real one, to spend the same time. */
const NO_HASH = sha256('gatehouse: no such service account');

export async function bind(
  ctx: AppContext,
  request: BindRequest,
  channel: BindChannel,
  limits: BindLimits,
  base: { text: string; dn: Dn },
): Promise<BindOutcome> {
  const refuse = (code: number, diagnostic: string): BindOutcome => ({ result: { code, diagnostic }, identity: ANONYMOUS });
  if (request.version !== 3) return refuse(ResultCode.protocolError, 'only LDAPv3 is supported');
  if (request.auth.kind === 'sasl') return refuse(ResultCode.authMethodNotSupported, 'only simple binds are supported');
  const password = request.auth.password;
  if (request.name === '' && password.length === 0) return { result: { code: ResultCode.success }, identity: ANONYMOUS };
  if (password.length === 0) return refuse(ResultCode.unwillingToPerform, 'unauthenticated binds are not allowed');
  if (!channel.secure && !channel.loopback && !ctx.config.ldap.allowPlain) {
    return refuse(ResultCode.confidentialityRequired, 'use StartTLS or LDAPS before sending a password');
  }

  const now = ctx.clock.now().getTime();
  const busy = async (): Promise<BindOutcome> => {
    countBind(ctx, 'busy');
    await new Promise((resolve) => setTimeout(resolve, BUSY_DELAY_MS));
    return refuse(ResultCode.busy, 'too many failed binds; try again later');
  };
  if (limits.byAddress.blocked(channel.address, now) !== undefined) return busy();

  const identity = await check(ctx, named(request.name, base.dn), password.toString('utf8'), base.text);
  if (identity) {
    countBind(ctx, 'success');
    return { result: { code: ResultCode.success }, identity };
  }
  // A wrong password: counted against the address and the name; past the name's budget, busy.
  const key = nameKey(request.name);
  const nameSpent = limits.byName.blocked(key, now) !== undefined;
  limits.byAddress.hit(channel.address, now);
  limits.byName.hit(key, now);
  if (nameSpent) return busy();
  countBind(ctx, 'invalid_credentials');
  const at = ctx.clock.now();
  await recordAudit(ctx.db, at, {
    actor: 'system',
    action: 'ldap.bind_failed',
    details: { bindName: request.name.slice(0, 256), address: channel.address },
  });
  await countFailedSignIn(ctx.db, at, undefined);
  return refuse(ResultCode.invalidCredentials, '');
}

/** The identity a name and password prove, or undefined (one answer for every reason). */
async function check(ctx: AppContext, name: Named, password: string, base: string): Promise<Identity | undefined> {
  if (name.kind === 'service') {
    const app = await findApplication(ctx.db, name.applicationId);
    const hash = app?.ldap.enabled ? app.ldapPasswordHash : null;
    const ok = matchesHash(password, hash ?? NO_HASH);
    if (!ok || !app || !hash) return undefined;
    return { kind: 'service', dn: serviceAccountDn(base, app.id), applicationId: app.id, passwordHash: hash, groupsFilter: app.groupsFilter };
  }
  // A name that names nobody still pays for the look-up of the password, like one that does.
  const match = await verifyAppPassword(ctx, { login: name.kind === 'person' ? name.login : '', password });
  if (!match || name.kind !== 'person' || !match.application.ldap.enabled) return undefined;
  if (!(await inGroupRule(ctx, match.application, match.person.id))) return undefined;
  return {
    kind: 'person',
    dn: personDn(base, match.person.username),
    applicationId: match.application.id,
    personId: match.person.id,
    appPasswordId: match.appPasswordId,
    groupsFilter: match.application.groupsFilter,
  };
}

/**
 * A bound identity as it stands now (asked before each operation): the same identity, with its
 * application's current `groupsFilter`, while the service account's password is unchanged and
 * LDAP still on, or the app password still there and allowed; anonymous otherwise.
 */
export async function refreshIdentity(ctx: AppContext, identity: Identity): Promise<Identity> {
  if (identity.kind === 'anonymous') return identity;
  if (identity.kind === 'service') {
    const app = await findApplication(ctx.db, identity.applicationId);
    if (!app?.ldap.enabled || app.ldapPasswordHash !== identity.passwordHash) return ANONYMOUS;
    return { ...identity, groupsFilter: app.groupsFilter };
  }
  const match = await appPasswordStillValid(ctx, identity.appPasswordId);
  if (!match?.application.ldap.enabled || !(await inGroupRule(ctx, match.application, match.person.id))) return ANONYMOUS;
  return { ...identity, groupsFilter: match.application.groupsFilter };
}

/**
 * The application's group rule (spec ldap.md: "and in its forwardAuth.groups/group rule when it
 * has one"; applications/group-rule.ts, the one every protocol honours): a person binds only while
 * in one of its groups. Read from the application row the app-password check selected.
 */
function inGroupRule(ctx: AppContext, application: object, personId: string): Promise<boolean> {
  return personPassesGroupRule(ctx, application as Pick<Application, 'forwardAuth'>, personId);
}
