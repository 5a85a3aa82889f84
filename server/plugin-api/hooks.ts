/**
 * The core announces, plugins listen (docs/architecture.md, "How to add a protocol plugin"): what
 * happened to applications, sessions, people, memberships and groups, and the moment before a
 * token is signed. The core features call `emit` where the thing happens; a plugin subscribes in
 * its `setup` (plugin-api/index.ts) with `on`, and never needs the core to name it.
 *
 * Timing. Every event but `tokenIssuing` is emitted INSIDE the transaction that made the change:
 * a listener gets its `tx`, writes its own rows in the same transaction, and refuses the change by
 * throwing a Problem (everything rolls back; the caller answers it as usual). Work that must wait
 * for the commit (clearing a cache other requests would fill again with the old rows) goes
 * through `afterCommit(tx, fn)` (db/store.ts). Listeners run one after another, in the order the
 * plugins were set up.
 *
 * `tokenIssuing` is synchronous and sits on the token endpoint's hot path: with no listener it
 * costs one length check; a listener adds claims to the access token or shortens its lifetime.
 */
import type { Tx } from '../db/client.js';
import type { Application, MemberRole, MemberStatus, Person, PersonStatus } from '../db/schema.js';

/** Why sessions end (accounts/session.ts `endSessions`): kept with the back-channel logouts they cause, shown in the delivery log. */
export type SessionEndReason =
  | 'sign_out'
  | 'end_session'
  | 'session_revoked'
  | 'signed_out_elsewhere'
  | 'replaced_by_other_person'
  | 'password_changed'
  | 'password_reset'
  | 'second_factor_reset'
  | 'second_factor_removed'
  | 'membership_suspended'
  | 'membership_deleted'
  /** An administrator disabled, deleted or signed out the person everywhere (issue 33). */
  | 'person_disabled'
  | 'person_deleted'
  | 'signed_out_by_administrator';

export interface HookEvents {
  /** An application was created, changed (its record, its auth policy) or deleted. */
  applicationChanged: { tx: Tx; now: Date; applicationId: string; change: 'created' | 'updated' | 'deleted'; actor: string };
  /**
   * Sign-ins ended: `sessionIds` the browser sessions ended now (empty when only one application's
   * tokens were withdrawn: `applicationId` set, the sessions live on for the person's other ones).
   */
  sessionsEnded: { tx: Tx; now: Date; personId: string | undefined; sessionIds: string[]; applicationId: string | undefined; reason: SessionEndReason };
  /** A person was disabled or enabled again (`person.status` is the new one); disabling ended their sessions first. */
  personStatusChanged: { tx: Tx; now: Date; person: Person; status: PersonStatus; actor: string };
  /**
   * A person is being deleted (their sessions have ended): emitted in the transaction that removes
   * their row, before it goes, so a listener removes what it keeps of them. Refusing a delete is a
   * guard's (registries.ts `ChangeGuard`), before anything happened.
   */
  personDeleted: { tx: Tx; now: Date; person: Person; actor: string };
  /**
   * An administrator changed a membership's status or role (`status` the new one), or deleted it
   * (`status: 'deleted'`); its sign-ins to the application have ended first when it was suspended
   * or deleted. Joining is not announced (an application learns of it by webhook).
   */
  membershipChanged: {
    tx: Tx;
    now: Date;
    applicationId: string;
    personId: string;
    status: MemberStatus | 'deleted';
    role: MemberRole | undefined;
    actor: string;
  };
  /**
   * Directory groups changed: created, renamed or deleted (`groupIds`), or who is in them
   * (`personIds` added or removed) by an administrator or a person created in them. Joining the
   * groups an invitation names is not announced (the person's groups are read at each sign-in anyway).
   */
  groupsChanged: { tx: Tx; now: Date; groupIds: string[]; personIds: string[]; actor: string };
}

export type HookName = keyof HookEvents;
export type Listener<E> = (event: E) => void | Promise<void>;

/** What a `tokenIssuing` listener sees and may change. */
export interface TokenIssuing {
  /** The OAuth client the token is for. */
  readonly client: Pick<Application, 'id' | 'audience'>;
  readonly grantType: string;
  /** The person the token acts for; undefined for client credentials. */
  readonly personId: string | undefined;
  readonly scope: string;
  /** Claims added to the access token (a listener sets its own; registered claims are not overridden). */
  readonly claims: Record<string, unknown>;
  /** The access token's lifetime in seconds; a listener may lower it, never raise it. */
  ttlSeconds: number;
}
export type TokenListener = (token: TokenIssuing) => void;

export class Hooks {
  private readonly listeners: { [K in HookName]: Listener<HookEvents[K]>[] } = {
    applicationChanged: [],
    sessionsEnded: [],
    personStatusChanged: [],
    personDeleted: [],
    membershipChanged: [],
    groupsChanged: [],
  };
  /** The `tokenIssuing` listeners (read by the token endpoint without a call when empty). */
  readonly tokenIssuing: TokenListener[] = [];

  on<K extends HookName>(name: K, listener: Listener<HookEvents[K]>): void {
    this.listeners[name].push(listener as never);
  }

  onTokenIssuing(listener: TokenListener): void {
    this.tokenIssuing.push(listener);
  }

  /** Runs the listeners of `name` one after another (inside the caller's transaction). */
  async emit<K extends HookName>(name: K, event: HookEvents[K]): Promise<void> {
    for (const listener of this.listeners[name] as Listener<HookEvents[K]>[]) await listener(event);
  }

  /**
   * What the listeners make of a token about to be signed: the access token's extra claims (or
   * undefined: none) and its lifetime. Synchronous: no promise on the token endpoint's hot path.
   */
  issuing(token: Omit<TokenIssuing, 'claims'>, claims: Record<string, unknown> | undefined): { claims: Record<string, unknown> | undefined; ttlSeconds: number } {
    if (!this.tokenIssuing.length) return { claims, ttlSeconds: token.ttlSeconds };
    const event: TokenIssuing = { ...token, claims: { ...claims } };
    const asked = token.ttlSeconds;
    for (const listener of this.tokenIssuing) listener(event);
    const ttlSeconds = Number.isInteger(event.ttlSeconds) && event.ttlSeconds > 0 ? Math.min(asked, event.ttlSeconds) : asked;
    return { claims: Object.keys(event.claims).length ? event.claims : undefined, ttlSeconds };
  }
}
