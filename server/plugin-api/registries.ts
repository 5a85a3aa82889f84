/**
 * The registries plugins fill (docs/architecture.md, "How to add a protocol plugin"): each is a
 * list the core reads where the thing happens (the account page renders its sections, Test
 * sign-in runs its checks, the admin guard reads its routes' rules), so a plugin adds a section, a
 * check or an admin route without the core naming it. A plugin fills them in its `setup`
 * (plugin-api/index.ts), before any route is registered; after that they are closed, so a late
 * addition fails loudly instead of being half seen.
 *
 * Callbacks receive what the core has at hand (the request's person, the transaction); anything
 * else a plugin needs (the app context) it keeps from its `setup`.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { Tx } from '../db/client.js';
import type { Application, Group, Membership, Person, Session } from '../db/schema.js';
import type { AdminPerson, Need } from '../http/admin-policy.js';
import type { Translate } from '../i18n/index.js';
import type { ApplicationField } from './application-fields.js';

/** An ordered list of named entries; `add` refuses a name twice, and everything once closed. */
export class Registry<T extends { name: string }> {
  private readonly items: T[] = [];
  private closed = false;

  constructor(private readonly what: string) {}

  add(item: T): void {
    if (this.closed) throw new Error(`${this.what} "${item.name}" was registered after start-up: register it in the plugin's setup`);
    if (this.items.some((i) => i.name === item.name)) throw new Error(`${this.what} "${item.name}" is registered twice`);
    this.items.push(item);
  }

  get all(): readonly T[] {
    return this.items;
  }

  find(name: string): T | undefined {
    return this.items.find((i) => i.name === name);
  }

  close(): void {
    this.closed = true;
  }
}

// --- The hosted account page --------------------------------------------------------------------

/** The signed-in person on the account page and under /api/me (self-service/service.ts `Me`). */
export interface SignedInPerson {
  person: Person;
  session: Session;
}

/** The form helpers of the account page (pages/account/forms.ts), handed to a section's routes. */
export interface AccountForms {
  /** The CSRF check, then the caller; undefined when signed out (answer with `back(reply, 'signed_out')`). */
  caller(request: FastifyRequest, csrfToken: string | undefined): Promise<SignedInPerson | undefined>;
  /**
   * Runs a form's action; a Problem it throws is shown at the section (`target`: its name) after a
   * 303 back to the page, and returned as that answer. Undefined when the action succeeded.
   */
  act(request: FastifyRequest, reply: FastifyReply, target: string, action: () => unknown): Promise<FastifyReply | undefined>;
  /** 303 back to the page with a notice (one of the section's `notices`, or `signed_out`), at `anchor`. */
  back(reply: FastifyReply, notice: string, anchor?: string): FastifyReply;
  /** Renders a hosted page (a template under server/pages/templates) with the usual headers. */
  render(reply: FastifyReply, template: string, data: Record<string, unknown>): FastifyReply;
}

/** What a section is given to show itself. */
export interface AccountSectionInput {
  me: SignedInPerson;
  /** The person's memberships with their applications. */
  memberships: { m: Membership; app: Application }[];
  t: Translate;
  /** A date as the page writes it ("2026-11-22 14:03 UTC"). */
  when: (date: Date | string) => string;
}

/**
 * A section of the account page (`/account`): its own `<section id="<name>">`, drawn by the
 * template `server/pages/templates/account/<name>.eta` from what `view` returns (`it.section`),
 * at a place on the page (`after`: the applications list, or the security section), with its form
 * routes under `/account/<name>/…`. `view` returning undefined leaves the section out.
 */
export interface AccountSection {
  name: string;
  after: 'applications' | 'security';
  view(input: AccountSectionInput): Promise<unknown> | unknown;
  /** The notices its forms come back with (`/account?notice=…`; texts `account.notices.<notice>`). */
  notices?: string[];
  /** Its form routes, registered in the account page's scope (form bodies, page errors). */
  routes?(app: FastifyInstance, forms: AccountForms): void | Promise<void>;
}

/** JSON routes under `/api/me` (session cookie, the JSON CSRF rule): `meOf` is the signed-in caller. */
export interface MeRoutes {
  name: string;
  routes(app: FastifyInstance, meOf: (request: FastifyRequest) => SignedInPerson): void;
}

// --- The admin API ("panel routes") -------------------------------------------------------------

/**
 * Admin API routes a plugin adds under `/api/admin`, behind the admin guard, with the rule of each
 * (http/admin-policy.ts: who may call it; a route without a rule is the owner's). Keys are
 * `METHOD /path` as Fastify registers them without the prefix.
 */
export interface AdminRoutes {
  name: string;
  routes: FastifyPluginAsync;
  policy: Record<string, Need>;
}

/** The admin guard's answer for a credential a plugin knows (a panel access token). */
export interface AdminCredential {
  name: string;
  /** The administrator behind `token`, or undefined when the token is not this plugin's or no longer grants access. */
  authenticate(token: string): Promise<AdminPerson | undefined>;
  /** The administrator role a person holds, if any (admin-auth.ts `requireMayActOn`: nobody acts on a higher role). */
  roleOf?(personId: string): Promise<AdminPerson['role'] | undefined>;
}

export type { AdminPerson };

// --- Sign-in and browser flows ------------------------------------------------------------------

/** What Test sign-in checked against the tokens it received, in words. */
export interface TestSignInCheck {
  text: string;
  passed: boolean;
  detail: string;
}
export interface TestSignInTokens {
  access_token: string;
  id_token?: string | undefined;
  refresh_token?: string | undefined;
  scope?: string | undefined;
}

/** Checks Test sign-in runs after the exchange (`POST /api/admin/applications/:id/test-sign-in`'s `checks`). */
export interface TestSignInChecks {
  name: string;
  checks(app: Application, tokens: TestSignInTokens): TestSignInCheck[];
}

/**
 * A browser flow of a plugin that the hosted pages take part in: the sign-in, sign-up and
 * second-factor pages may come back to `resumePrefix` (a path and `?`) when done; the consent page
 * asks what the flow wants (`consentRequest`); and a page whose form answer redirects onward allows
 * the flow's targets of an application in its CSP (`formActionSources`).
 */
export interface BrowserFlow {
  name: string;
  resumePrefix: string;
  /** The application and scope the consent page asks about for a `return_to` of this flow; undefined when it is not one. */
  consentRequest?(returnTo: string): Promise<{ client: Application; scope: string } | undefined>;
  /** Origins (or schemes) a form's answer may redirect to for this application, beside its redirect URIs. */
  formActionSources?(app: Application): string[];
}

/**
 * A front-channel logout a plugin runs when a browser signs out (the account page's sign-out, an
 * OIDC end-session): called after the browser's session ended and its cookie was cleared, with the
 * sessions that ended and where the browser was going (`next`; undefined: the signed-out page, for
 * `application`). A flow that has others to tell through the browser (SAML single logout) answers
 * the request and sends the browser on to `next` when done; undefined: nothing to do. The first
 * flow that answers takes the browser.
 */
export interface LogoutFlow {
  name: string;
  afterSignOut(request: FastifyRequest, reply: FastifyReply, ended: { sessionIds: string[]; next: string | undefined; application: Application | undefined }): Promise<FastifyReply | undefined>;
}

/** How a password sign-in's check went, for a person a source keeps. */
export type PasswordCheck = 'valid' | 'invalid';

/**
 * Where a person's password lives when not in Gatehouse (an LDAP or Active Directory source):
 * password sign-in asks the first source that `owns` the person to check it instead of the stored
 * hash, and, for a login no one has, asks each source to `discover` a person (creating them when
 * the source knows the login and the password is right). The back-off, second factor and session
 * rules stay the core's. A source that cannot be reached throws a Problem (503
 * `directory_unavailable`), which is answered as is and not counted as a failed attempt.
 */
export interface SignInSource {
  name: string;
  owns(person: Person): boolean;
  verify(person: Person, password: string): Promise<PasswordCheck>;
  discover?(login: string, password: string): Promise<Person | undefined>;
}

// --- Guards ---------------------------------------------------------------------------------------

/** A change about to be made to a person (people/, self-service/, accounts/). */
export type PersonChange =
  | { kind: 'update'; fields: string[] }
  | { kind: 'password' }
  | { kind: 'disable' }
  | { kind: 'enable' }
  | { kind: 'delete' };
/** A change about to be made to a directory group (groups/). */
export type GroupChange = { kind: 'update'; fields: string[] } | { kind: 'delete' } | { kind: 'members'; personIds: string[] };

/**
 * Refusals a plugin adds to changes the core makes (the last owner may not be disabled; a person
 * a directory source keeps may not change their password: 409 `managed_by_source`): called inside
 * the change's transaction before it is made; throwing a Problem refuses it.
 */
export interface ChangeGuard {
  name: string;
  person?(tx: Tx, person: Person, change: PersonChange, actor: string): Promise<void> | void;
  group?(tx: Tx, group: Group, change: GroupChange, actor: string): Promise<void> | void;
}

// --- What the installation shows about itself ----------------------------------------------------

/**
 * A part of the control panel's overview (`GET /api/admin/overview`) a plugin adds: its field, with
 * its schema, after the core's (the LDAP directory's listener; next RADIUS's).
 */
export interface OverviewSection {
  name: string;
  schema: TSchema;
  value(): unknown;
}

/**
 * A line of `gatehouse status` a plugin adds (GatehousePlugin `status`, read by the command
 * without a server): the state the server recorded under `metaKey` in the `meta` table when it
 * started (shown as the field `name` of `--json`), in words after `label`.
 */
export interface RecordedStatus {
  name: string;
  label: string;
  metaKey: string;
  /** The words for the recorded state (null: none recorded); `running` whether that server runs now (undefined: cannot tell). */
  line(recorded: unknown, running: boolean | undefined): string;
}

/**
 * A part of an application's set-up text (`GET /api/admin/applications/:id/setup`): its field in
 * the answer, with its schema, and its value for the application (null when it does not apply).
 */
export interface SetupSection {
  name: string;
  schema: TSchema;
  /** Query parameters the section reads (optional in the route's query schema). */
  query?: Record<string, TSchema>;
  value(app: Application, query: Record<string, string | undefined>): Promise<unknown> | unknown;
}

/**
 * Another shape `POST /api/admin/applications` accepts beside the application's own fields (an
 * app preset): told apart by the property `discriminator`, turned into the create body and the
 * origin recorded with the application.
 */
export interface ApplicationTemplate {
  name: string;
  discriminator: string;
  schema: TSchema;
  toCreate(body: Record<string, unknown>): Promise<{ create: Record<string, unknown>; origin: Application['preset'] }>;
}

/** The registries of one app (`ctx.registries`). */
export class Registries {
  readonly applicationFields = new Registry<ApplicationField<never>>('application field');
  readonly applicationTemplates = new Registry<ApplicationTemplate>('application template');
  readonly accountSections = new Registry<AccountSection>('account-page section');
  readonly meRoutes = new Registry<MeRoutes>('/api/me routes');
  readonly adminRoutes = new Registry<AdminRoutes>('admin routes');
  readonly adminCredentials = new Registry<AdminCredential>('admin credential');
  readonly testSignInChecks = new Registry<TestSignInChecks>('test sign-in checks');
  readonly browserFlows = new Registry<BrowserFlow>('browser flow');
  readonly logoutFlows = new Registry<LogoutFlow>('logout flow');
  readonly signInSources = new Registry<SignInSource>('sign-in source');
  readonly guards = new Registry<ChangeGuard>('change guard');
  readonly overviewSections = new Registry<OverviewSection>('overview section');
  readonly setupSections = new Registry<SetupSection>('set-up section');

  /** Closes every registry (buildApp, once every plugin is set up). */
  close(): void {
    for (const registry of Object.values(this)) (registry as Registry<{ name: string }>).close();
  }
}

/** Runs every guard's `person` check of a change (inside the caller's transaction). */
export async function guardPerson(registries: Registries, tx: Tx, person: Person, change: PersonChange, actor: string): Promise<void> {
  for (const guard of registries.guards.all) await guard.person?.(tx, person, change, actor);
}

/** Runs every guard's `group` check of a change (inside the caller's transaction). */
export async function guardGroup(registries: Registries, tx: Tx, group: Group, change: GroupChange, actor: string): Promise<void> {
  for (const guard of registries.guards.all) await guard.group?.(tx, group, change, actor);
}

