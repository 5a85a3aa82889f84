/**
 * The rules of an application record that a JSON schema cannot express (DESIGN §4.3), shared by
 * create and update: the auth policy, redirect URIs and grant types for the client type, the
 * webhook and back-channel logout URLs, a webhook secret only with a URL, an existing SSO group,
 * the claim settings (claim-settings.ts), a free audience, and the fields plugins registered
 * (plugin-api/application-fields.ts: each checks its own value). All failures of one request are
 * reported together as one 400.
 */
import { and, eq, inArray, ne } from 'drizzle-orm';
import { applications, ssoGroups, type Application, type AuthPolicy, type ClientType, type CustomClaim, type GrantType } from '../db/schema.js';
import type { AppContext } from '../context.js';
import type { Tx } from '../db/client.js';
import { conflict, type FieldError } from '../http/problem.js';
import { many, one } from '../db/store.js';
import { recordAudit } from '../audit/record.js';
import { recordEvent } from '../webhooks/outbox.js';
import { webhookSecretProblem } from '../webhooks/sign.js';
import { webhookHostProblem, webhookTargetPolicy } from '../webhooks/target-address.js';
import { existingGroupIds } from '../groups/queries.js';
import { EVERY_APPLICATION, type ApplicationFieldWrite } from '../plugin-api/application-fields.js';
import { checkRedirectUris, isPrivateHost, sameRedirectUris } from './redirect-uris.js';
import { checkProfileFieldDefinitions } from './profile-fields.js';
import { isKnownProvider } from './providers.js';
import { checkCustomClaims, checkGroupsFilter, checkResourceServers, type WireCustomClaim } from './claim-settings.js';
import { DEFAULT_GRANT_TYPES, type ApplicationPatch, type AuthPolicyPatch } from './schemas.js';
import { accentColorProblem } from './branding.js';

export const DEFAULT_AUTH_POLICY: AuthPolicy = {
  signup_policy: 'invite_only',
  allowed_providers: ['email'],
  profile_fields: [],
  mfa: 'optional',
};

/** The stored policy as the wire shows it; `mfa` defaults to `optional` for rows written without it. */
export function authPolicyOf(app: Pick<Application, 'authPolicy'>): AuthPolicy {
  return { ...app.authPolicy, mfa: app.authPolicy.mfa ?? 'optional' };
}

/** `base` with `patch` over it; its problems (unknown or repeated providers, profile fields) are added to `errors`. */
export function mergePolicy(base: AuthPolicy, patch: AuthPolicyPatch | undefined, path: string, errors: FieldError[]): AuthPolicy {
  const policy: AuthPolicy = {
    signup_policy: patch?.signup_policy ?? base.signup_policy,
    allowed_providers: patch?.allowed_providers ?? base.allowed_providers,
    profile_fields: (patch?.profile_fields ?? base.profile_fields) as AuthPolicy['profile_fields'],
    mfa: patch?.mfa ?? base.mfa ?? 'optional',
  };
  policy.allowed_providers.forEach((id, i) => {
    if (!isKnownProvider(id)) errors.push({ path: `${path}.allowed_providers.${i}`, message: `unknown provider "${id}"` });
  });
  if (new Set(policy.allowed_providers).size !== policy.allowed_providers.length) {
    errors.push({ path: `${path}.allowed_providers`, message: 'must not contain duplicates' });
  }
  errors.push(...checkProfileFieldDefinitions(policy.profile_fields, `${path}.profile_fields`));
  return policy;
}

/**
 * A URL Gatehouse itself will POST to (a webhook, a back-channel logout endpoint): absolute
 * http(s), no credentials, and a host that deliveries may reach (webhooks/target-address.ts:
 * never link-local, unspecified, multicast or this server; loopback only when allowed).
 * Returns the parsed URL when it passed.
 */
function checkTargetUrl(ctx: AppContext, url: string | null | undefined, path: string, errors: FieldError[]): URL | undefined {
  if (url === null || url === undefined) return undefined;
  const before = errors.length;
  let parsed: URL;
  try {
    parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
  } catch {
    errors.push({ path, message: 'must be an absolute http(s) URL' });
    return undefined;
  }
  if (parsed.username || parsed.password) errors.push({ path, message: 'must not contain credentials' });
  const port = Number(parsed.port) || (parsed.protocol === 'https:' ? 443 : 80);
  const problem = webhookHostProblem(parsed.hostname, port, webhookTargetPolicy(ctx));
  if (problem) errors.push({ path, message: problem });
  return errors.length === before ? parsed : undefined;
}

/**
 * The back-channel logout URI (spec grants-and-logout.md; Back-Channel Logout 1.0 §2.2): a
 * delivery target like a webhook, `https:`, or `http:` only on a loopback or LAN host, and no
 * fragment.
 */
function checkBackchannelLogoutUri(ctx: AppContext, url: string | null | undefined, errors: FieldError[]) {
  const path = 'body.backchannelLogoutUri';
  const parsed = checkTargetUrl(ctx, url, path, errors);
  if (!parsed) return;
  if (url!.includes('#')) errors.push({ path, message: 'must not contain a fragment' });
  else if (parsed.protocol === 'http:' && !isPrivateHost(parsed.hostname)) {
    errors.push({ path, message: 'http is allowed only for loopback or private-network hosts; use https' });
  }
}

/** `client_credentials` needs a client that can keep a secret (spec grants-and-logout.md). */
function checkGrantTypes(grantTypes: GrantType[], clientType: ClientType, errors: FieldError[]) {
  if (grantTypes.includes('client_credentials') && clientType !== 'web') {
    errors.push({ path: 'body.grantTypes', message: 'client_credentials is allowed only for confidential (web) applications' });
  }
}

/** The fields of an application as they will be after a create or update. */
export interface ApplicationShape {
  clientType: ClientType;
  redirectUris: string[];
  grantTypes: GrantType[];
  backchannelLogoutUri?: string | null;
  postLogoutRedirectUris?: string[] | null;
  webhookUrl?: string | null;
  webhookSecret?: string | null;
  ssoGroupId?: string | null;
  /** The application's own id (resource servers must be others). */
  id: string;
  /** Its profile fields after this change (custom claims may name them). */
  profileFields: AuthPolicy['profile_fields'];
  /** Claim settings given in this request (only those are checked). */
  groupsFilter?: string[] | null;
  customClaims?: WireCustomClaim[];
  resourceServers?: string[];
  /** The request body (each plugin field reads its own value from it). */
  body: Record<string, unknown>;
  /** The row before an update; undefined on create. */
  current?: Application;
  /** Whether the caller administers another application too (plugin-api/application-fields.ts). */
  manages: (applicationId: string) => boolean;
}

/** What the checks hand the write: the custom claims as stored (when given) and what each plugin field writes. */
export interface CheckedApplication {
  customClaims: CustomClaim[] | undefined;
  fields: ApplicationFieldWrite[];
}

/**
 * The rules a JSON schema cannot express, shared by create and update (see the module comment);
 * every failure is added to `errors`. Only what the request gives is checked, so an update never
 * fails over a setting it does not touch (a claim naming a since-removed group or profile field
 * stays, left out at issuance).
 */
async function checkApplication(ctx: AppContext, app: ApplicationShape, errors: FieldError[]): Promise<CheckedApplication> {
  errors.push(...checkRedirectUris(app.redirectUris, app.clientType));
  if (app.postLogoutRedirectUris) errors.push(...checkRedirectUris(app.postLogoutRedirectUris, app.clientType, 'body.postLogoutRedirectUris'));
  checkGrantTypes(app.grantTypes, app.clientType, errors);
  checkTargetUrl(ctx, app.webhookUrl, 'body.webhookUrl', errors);
  checkBackchannelLogoutUri(ctx, app.backchannelLogoutUri, errors);
  if (app.webhookSecret && !app.webhookUrl) errors.push({ path: 'body.webhookSecret', message: 'needs a webhookUrl' });
  if (app.webhookSecret) {
    const problem = webhookSecretProblem(app.webhookSecret);
    if (problem) errors.push({ path: 'body.webhookSecret', message: problem });
  }
  if (app.ssoGroupId && !await one(ctx.db.select({ id: ssoGroups.id }).from(ssoGroups).where(eq(ssoGroups.id, app.ssoGroupId)))) {
    errors.push({ path: 'body.ssoGroupId', message: `there is no SSO group "${app.ssoGroupId}"` });
  }
  const groups = { profileFields: app.profileFields, existingGroups: (ids: string[]) => existingGroupIds(ctx.db, ids) };
  const customClaims = app.customClaims && (await checkCustomClaims(app.customClaims, groups, errors));
  if (app.groupsFilter !== undefined) await checkGroupsFilter(app.groupsFilter, groups, errors);
  if (app.resourceServers?.length) checkResourceServers(app.resourceServers, app.id, await clientTypesOf(ctx.db, app.resourceServers), errors);
  const fields: ApplicationFieldWrite[] = [];
  for (const field of ctx.registries.applicationFields.all) {
    const given = app.body[field.name] as never;
    const write = await field.prepare({ id: app.id, given, current: app.current, clientType: app.clientType, profileFields: app.profileFields, errors, manages: app.manages });
    if (write) fields.push(write);
  }
  return { customClaims, fields };
}

/**
 * Every rule of a create (`current` undefined) or of an update of `current` by `patch`, checked
 * together: the auth policy, checkApplication's rules (the plugins' fields among them) and the
 * accent colour.
 */
export async function checkChange(ctx: AppContext, id: string, patch: ApplicationPatch, current: Application | undefined, manages: (applicationId: string) => boolean = EVERY_APPLICATION) {
  const errors: FieldError[] = [];
  const authPolicy = patch.authPolicy || !current ? mergePolicy(current?.authPolicy ?? DEFAULT_AUTH_POLICY, patch.authPolicy, 'body.authPolicy', errors) : current.authPolicy;
  const body = patch as Record<string, unknown>;
  const shape: ApplicationShape = current
    ? {
        id,
        clientType: patch.clientType ?? current.clientType,
        redirectUris: patch.redirectUris ?? current.redirectUris,
        postLogoutRedirectUris: patch.postLogoutRedirectUris === undefined ? current.postLogoutRedirectUris : patch.postLogoutRedirectUris,
        grantTypes: patch.grantTypes ?? current.grantTypes,
        webhookUrl: patch.webhookUrl === undefined ? current.webhookUrl : patch.webhookUrl,
        webhookSecret: patch.webhookSecret, ssoGroupId: patch.ssoGroupId, backchannelLogoutUri: patch.backchannelLogoutUri,
        profileFields: authPolicy.profile_fields, groupsFilter: patch.groupsFilter, customClaims: patch.customClaims,
        resourceServers: patch.resourceServers, body, current, manages,
      }
    : {
        ...patch,
        id,
        clientType: patch.clientType ?? 'web',
        redirectUris: patch.redirectUris ?? [],
        grantTypes: patch.grantTypes ?? DEFAULT_GRANT_TYPES,
        profileFields: authPolicy.profile_fields,
        body,
        manages,
      };
  const { customClaims, fields } = await checkApplication(ctx, shape, errors);
  const accentColor = patch.branding?.accentColor;
  const colorProblem = accentColor ? accentColorProblem(accentColor) : undefined;
  if (colorProblem) errors.push({ path: 'body.branding.accentColor', message: colorProblem });
  return { errors, authPolicy, customClaims, fields };
}

/**
 * Every problem a create (`current` undefined) or an update of `current` by `patch` would be
 * refused for, together, without changing anything: the rules' problems and an audience another
 * application uses. The admin API stops at the first kind (400, then 409); a configuration file
 * reports them all (config-as-code/).
 */
export async function applicationProblems(ctx: AppContext, id: string, patch: ApplicationPatch, current?: Application): Promise<FieldError[]> {
  const { errors } = await checkChange(ctx, id, patch, current);
  if (patch.audience !== undefined && (await audienceTaken(ctx.db, patch.audience, current ? id : undefined))) {
    errors.push({ path: 'body.audience', message: `"${patch.audience}" is already the audience of another application` });
  }
  return errors;
}

/** The client types of those of `ids` that are applications. */
async function clientTypesOf(db: Tx, ids: string[]): Promise<Map<string, string>> {
  const rows = await many(db.select({ id: applications.id, clientType: applications.clientType }).from(applications).where(inArray(applications.id, ids)));
  return new Map(rows.map((row) => [row.id, row.clientType]));
}

async function audienceTaken(tx: Tx, audience: string, exceptId?: string): Promise<boolean> {
  return Boolean(await one(tx
    .select({ id: applications.id })
    .from(applications)
    .where(exceptId ? and(eq(applications.audience, audience), ne(applications.id, exceptId)) : eq(applications.audience, audience))));
}

/** 409 `audience_in_use` when another application has the audience. */
export async function assertAudienceFree(tx: Tx, audience: string, exceptId?: string) {
  // Not naming the other application: an API key may only learn about its own.
  if (await audienceTaken(tx, audience, exceptId)) throw conflict('audience_in_use', `The audience "${audience}" is already used by another application.`);
}

/** `{field: {before, after}}` for each redirect list that changed, or undefined when none did. */
export function redirectChange(before: Application, after: Application) {
  const changed: Record<string, { before: string[] | null; after: string[] | null }> = {};
  if (!sameRedirectUris(before.redirectUris, after.redirectUris)) changed.redirectUris = { before: before.redirectUris, after: after.redirectUris };
  if (!sameRedirectUris(before.postLogoutRedirectUris, after.postLogoutRedirectUris)) {
    changed.postLogoutRedirectUris = { before: before.postLogoutRedirectUris, after: after.postLogoutRedirectUris };
  }
  return Object.keys(changed).length ? changed : undefined;
}

/**
 * Where sign-ins (or sign-outs) may be sent changed (issue 22): one audit entry, and the
 * application hears it by webhook, so its owners learn when someone (an administrator, or a leaked
 * admin token) moves the place its codes go. Written in the update's transaction.
 */
export async function recordRedirectChange(tx: Tx, now: Date, actor: string, before: Application, after: Application) {
  const details = redirectChange(before, after);
  if (!details) return;
  await recordAudit(tx, now, { actor, action: 'application.redirect_uris_changed', applicationId: after.id, target: after.id, details });
  await recordEvent(tx, now, after.id, 'application.redirect_uris_changed', { actor, ...details });
}
