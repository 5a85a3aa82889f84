/**
 * Application rules (DESIGN §4.3–4.4): creation with defaults, secrets shown once, updates,
 * cascading delete, client-secret rotation and auth-policy changes. Every write is audited in
 * its own transaction.
 */
import { randomBytes } from 'node:crypto';
import { and, asc, eq, inArray, ne } from 'drizzle-orm';
import { applications, people, ssoGroups, type Application, type AppliedPreset, type AuthPolicy, type ClientType, type CustomClaim, type ForwardAuthSettings, type GrantType } from '../db/schema.js';
import type { AppContext } from '../context.js';
import type { Tx } from '../db/client.js';
import { recordAudit } from '../audit/record.js';
import { conflict, notFound, validationFailed, type FieldError } from '../http/problem.js';
import { afterCursor, toPage } from '../http/pagination.js';
import { iso } from '../http/schemas.js';
import { randomToken, sha256 } from '../util/crypto.js';
import { checkRedirectUris, isPrivateHost, sameRedirectUris } from './redirect-uris.js';
import { applicationRealm } from './realms.js';
import { beginPurge, isPurging } from '../data-lifecycle/purge.js';
import { getApplication } from './lookup.js';
import { brandingRecord, checkAccentColor } from './branding.js';
import { checkProfileFieldDefinitions } from './profile-fields.js';
import { isKnownProvider } from './providers.js';
import { DEFAULT_GRANT_TYPES, type ApplicationCreate, type ApplicationPatch, type AuthPolicyPatch } from './schemas.js';
import { webhookSecretProblem, webhookSecretPurpose } from '../webhooks/sign.js';
import { openNullable, sealNullable } from '../db/secrets-at-rest.js';
import { webhookHostProblem, webhookTargetPolicy } from '../webhooks/target-address.js';
import { recordEvent } from '../webhooks/outbox.js';
import { applicationBindDn, type TreeConfig } from '../ldap/tree.js';
import { exec, many, one, transaction } from '../db/store.js';
import { claimHosts, forwardAuthSettings } from '../forward-auth/settings.js';
import { forwardAuthChanged } from '../forward-auth/protected-hosts.js';
import { checkCustomClaims, checkGroupsFilter, checkResourceServers, type WireCustomClaim } from './claim-settings.js';
import { existingGroupIds } from '../groups/queries.js';
import { createMembership } from '../members/create.js';
import { ownerIds } from '../administrators/queries.js';
import { PANEL_CLIENT_ID } from '../administrators/panel-client.js';

export const DEFAULT_AUTH_POLICY: AuthPolicy = {
  signup_policy: 'invite_only',
  allowed_providers: ['email'],
  profile_fields: [],
  mfa: 'optional',
};

/** How long deliveries are signed with the old secret too after a rotation (issue: webhooks). */
export const WEBHOOK_SECRET_OVERLAP_MS = 24 * 3600 * 1000;

/** The stored policy as the wire shows it; `mfa` defaults to `optional` for rows written without it. */
export function authPolicyOf(app: Pick<Application, 'authPolicy'>): AuthPolicy {
  return { ...app.authPolicy, mfa: app.authPolicy.mfa ?? 'optional' };
}

export function applicationRecord(app: Application, config: TreeConfig) {
  const issuer = config.issuer;
  return {
    id: app.id,
    name: app.name,
    audience: app.audience,
    redirectUris: app.redirectUris,
    postLogoutRedirectUris: app.postLogoutRedirectUris,
    clientType: app.clientType,
    webhookUrl: app.webhookUrl,
    webhookSecretSet: Boolean(app.webhookSecret),
    ssoGroupId: app.ssoGroupId,
    authPolicy: authPolicyOf(app),
    grantTypes: app.grantTypes,
    backchannelLogoutUri: app.backchannelLogoutUri,
    backchannelLogoutSessionRequired: app.backchannelLogoutSessionRequired,
    branding: brandingRecord(app, issuer),
    consent: app.consent,
    forwardAuth: app.forwardAuth ?? null,
    unknownScopes: app.unknownScopes,
    groupsFilter: app.groupsFilter,
    customClaims: app.customClaims,
    resourceServers: app.resourceServers,
    signingAlg: app.signingAlg,
    ldap: { enabled: app.ldap.enabled, bindDn: applicationBindDn(config, app.id) },
    preset: app.preset ? { id: app.preset.id, version: app.preset.version } : null,
    createdAt: iso(app.createdAt)!,
    updatedAt: iso(app.updatedAt)!,
  };
}

/** An LDAP service account's password (spec ldap.md): 256 random bits, stored as SHA-256. */
export function newLdapPassword(): string {
  return randomToken('ghl_');
}

export function newClientSecret(): string {
  return randomToken('ghs_');
}

/** Standard Webhooks secret format: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export { getApplication };

async function ownersAsPeople(tx: Tx) {
  const ids = await ownerIds(tx);
  if (!ids.length) return [];
  return await many(tx.select({ id: people.id, email: people.email, name: people.name }).from(people).where(inArray(people.id, ids)));
}

/**
 * A page of applications; `only`: just these (an app manager's, an API key's). The panel's
 * built-in client (administrators/panel-client.ts) is never listed.
 */
export async function listApplications(ctx: AppContext, limit: number, cursor?: string, only?: readonly string[]) {
  const rows = await many(ctx.db
    .select()
    .from(applications)
    .where(and(afterCursor(applications.createdAt, applications.id, cursor), ne(applications.id, PANEL_CLIENT_ID), only ? inArray(applications.id, [...only]) : undefined))
    .orderBy(asc(applications.createdAt), asc(applications.id))
    .limit(limit + 1));
  const page = toPage(rows, limit, (a) => ({ t: a.createdAt.getTime(), id: a.id }));
  return { applications: page.items.map((app) => applicationRecord(app, ctx.config)), nextCursor: page.nextCursor };
}

function mergePolicy(base: AuthPolicy, patch: AuthPolicyPatch | undefined, path: string): AuthPolicy {
  const policy: AuthPolicy = {
    signup_policy: patch?.signup_policy ?? base.signup_policy,
    allowed_providers: patch?.allowed_providers ?? base.allowed_providers,
    profile_fields: (patch?.profile_fields ?? base.profile_fields) as AuthPolicy['profile_fields'],
    mfa: patch?.mfa ?? base.mfa ?? 'optional',
  };
  const errors: FieldError[] = [];
  policy.allowed_providers.forEach((id, i) => {
    if (!isKnownProvider(id)) errors.push({ path: `${path}.allowed_providers.${i}`, message: `unknown provider "${id}"` });
  });
  if (new Set(policy.allowed_providers).size !== policy.allowed_providers.length) {
    errors.push({ path: `${path}.allowed_providers`, message: 'must not contain duplicates' });
  }
  errors.push(...checkProfileFieldDefinitions(policy.profile_fields, `${path}.profile_fields`));
  if (errors.length) throw validationFailed(errors);
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
interface ApplicationShape {
  clientType: ClientType;
  redirectUris: string[];
  grantTypes: GrantType[];
  backchannelLogoutUri?: string | null;
  postLogoutRedirectUris?: string[] | null;
  webhookUrl?: string | null;
  webhookSecret?: string | null;
  ssoGroupId?: string | null;
  /** The request's `forwardAuth` (undefined: not given) and, on update, the stored one. */
  forwardAuth?: ApplicationCreate['forwardAuth'];
  currentForwardAuth?: ForwardAuthSettings | null;
  /** The application's own id (resource servers must be others). */
  id: string;
  /** Its profile fields after this change (custom claims may name them). */
  profileFields: AuthPolicy['profile_fields'];
  /** Claim settings given in this request (only those are checked). */
  groupsFilter?: string[] | null;
  customClaims?: WireCustomClaim[];
  resourceServers?: string[];
}

/**
 * The rules a JSON schema cannot express (DESIGN §4.3), shared by create and update: redirect URIs
 * and grant types for the client type, the webhook and back-channel logout URLs, a webhook secret
 * only with a URL, an existing SSO group, the claim settings (claim-settings.ts), and forward auth's
 * hosts and groups (forward-auth/settings.ts). All failures are reported together as one 400.
 * Returns the custom claims and the forward-auth settings as stored, when given.
 */
async function checkApplication(
  ctx: AppContext,
  app: ApplicationShape,
): Promise<{ customClaims: CustomClaim[] | undefined; forwardAuth: ForwardAuthSettings | null | undefined }> {
  const errors = checkRedirectUris(app.redirectUris, app.clientType);
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
  const forwardAuth = await forwardAuthSettings(ctx.db, app.forwardAuth, app.clientType, errors);
  if (app.forwardAuth === undefined && app.currentForwardAuth && app.clientType !== 'web') {
    errors.push({ path: 'body.clientType', message: 'an application that protects hosts (forwardAuth) must stay a web application' });
  }
  if (errors.length) throw validationFailed(errors);
  return { customClaims, forwardAuth };
}

/** The client types of those of `ids` that are applications. */
async function clientTypesOf(db: Tx, ids: string[]): Promise<Map<string, string>> {
  const rows = await many(db.select({ id: applications.id, clientType: applications.clientType }).from(applications).where(inArray(applications.id, ids)));
  return new Map(rows.map((row) => [row.id, row.clientType]));
}

async function assertAudienceFree(tx: Tx, audience: string, exceptId?: string) {
  const clash = await one(tx
    .select({ id: applications.id })
    .from(applications)
    .where(exceptId ? and(eq(applications.audience, audience), ne(applications.id, exceptId)) : eq(applications.audience, audience)));
  // Not naming the other application: an API key may only learn about its own.
  if (clash) throw conflict('audience_in_use', `The audience "${audience}" is already used by another application.`);
}

/** The record plus the secrets that exist only in this one response (DESIGN §4.3). */
function withSecretsShownOnce(ctx: AppContext, app: Application, secrets: { clientSecret?: string | undefined; webhookSecret?: string | undefined; ldapPassword?: string | undefined }) {
  return {
    ...applicationRecord(app, ctx.config),
    ...(secrets.clientSecret ? { clientSecret: secrets.clientSecret } : {}),
    ...(secrets.webhookSecret ? { webhookSecret: secrets.webhookSecret } : {}),
    ...(secrets.ldapPassword ? { ldapPassword: secrets.ldapPassword } : {}),
  };
}

/**
 * What a caller other than the admin API may add to a create: a configuration file's client
 * secret, taken from a reference (config-as-code), instead of a generated one shown once.
 */
export interface CreateOptions {
  clientSecret?: string | undefined;
}

/** `preset`: the app preset the input was made from (presets/apply.ts), recorded with the application. */
export async function createApplication(ctx: AppContext, input: ApplicationCreate, actor: string, preset?: AppliedPreset | null, options: CreateOptions = {}) {
  const clientType = input.clientType ?? 'web';
  const grantTypes = input.grantTypes ?? DEFAULT_GRANT_TYPES;
  const authPolicy = mergePolicy(DEFAULT_AUTH_POLICY, input.authPolicy, 'body.authPolicy');
  const { customClaims, forwardAuth } = await checkApplication(ctx, { ...input, clientType, grantTypes, profileFields: authPolicy.profile_fields });
  checkAccentColor(input.branding?.accentColor);

  const givenClientSecret = clientType === 'web' ? options.clientSecret : undefined;
  const clientSecret = clientType === 'web' && !givenClientSecret ? newClientSecret() : undefined;
  const secretToStore = givenClientSecret ?? clientSecret;
  const generatedWebhookSecret = input.webhookUrl && !input.webhookSecret ? newWebhookSecret() : undefined;
  const ldapPassword = input.ldap?.enabled ? newLdapPassword() : undefined;
  const now = ctx.clock.now();

  const created = await transaction(ctx.db, async (tx) => {
    if (await one(tx.select({ id: applications.id }).from(applications).where(eq(applications.id, input.id)))) {
      throw conflict('application_exists', `An application with id "${input.id}" already exists.`);
    }
    if (await isPurging(tx, 'application', input.id)) {
      throw conflict('deletion_in_progress', `The application "${input.id}" is still being deleted; its id is free again once that has finished.`);
    }
    await assertAudienceFree(tx, input.audience);
    const row = await one(tx
      .insert(applications)
      .values({
        id: input.id,
        name: input.name,
        audience: input.audience,
        redirectUris: input.redirectUris,
        postLogoutRedirectUris: input.postLogoutRedirectUris ?? null,
        clientType,
        clientSecretHash: secretToStore ? sha256(secretToStore) : null,
        webhookUrl: input.webhookUrl ?? null,
        webhookSecret: input.webhookUrl ? sealNullable(tx, input.webhookSecret ?? generatedWebhookSecret ?? null, webhookSecretPurpose(input.id)) : null,
        ssoGroupId: input.ssoGroupId ?? null,
        authPolicy,
        grantTypes,
        backchannelLogoutUri: input.backchannelLogoutUri ?? null,
        backchannelLogoutSessionRequired: input.backchannelLogoutSessionRequired ?? true,
        brandAccentColor: input.branding?.accentColor ?? null,
        consent: input.consent ?? 'implicit',
        forwardAuth: forwardAuth ?? null,
        unknownScopes: input.unknownScopes ?? 'reject',
        groupsFilter: input.groupsFilter ?? null,
        customClaims: customClaims ?? [],
        resourceServers: input.resourceServers ?? [],
        signingAlg: input.signingAlg ?? 'RS256',
        ldap: { enabled: Boolean(input.ldap?.enabled) },
        ldapPasswordHash: ldapPassword ? sha256(ldapPassword) : null,
        preset: preset ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .returning());
    if (forwardAuth) await claimHosts(tx, row.id, forwardAuth.hosts);
    await recordAudit(tx, now, {
      actor, action: 'application.created', applicationId: row.id, target: row.id,
      details: { name: row.name, clientType, ...(preset ? { preset: preset.id, presetVersion: preset.version } : {}) },
    });
    // Owners join every new application as its administrators, so its Test sign-in works at once
    // (spec administrators-and-people.md, "First run").
    for (const owner of await ownersAsPeople(tx)) await createMembership(tx, now, row.id, owner, 'admin');
    return row;
  });
  return withSecretsShownOnce(ctx, created, { clientSecret, webhookSecret: generatedWebhookSecret, ldapPassword });
}

/**
 * `options.preset`: a new record of the app preset (an upgrade taken, presets/upgrade.ts; a
 * configuration file's, config-as-code), written in the same transaction; null: none any more.
 */
export async function updateApplication(ctx: AppContext, id: string, patch: ApplicationPatch, actor: string, options: { preset?: AppliedPreset | null } = {}) {
  const current = await getApplication(ctx, id);
  const clientType = patch.clientType ?? current.clientType;
  const redirectUris = patch.redirectUris ?? current.redirectUris;
  const postLogoutRedirectUris = patch.postLogoutRedirectUris === undefined ? current.postLogoutRedirectUris : patch.postLogoutRedirectUris;
  const webhookUrl = patch.webhookUrl === undefined ? current.webhookUrl : patch.webhookUrl;
  const grantTypes = patch.grantTypes ?? current.grantTypes;
  const backchannelLogoutUri = patch.backchannelLogoutUri === undefined ? current.backchannelLogoutUri : patch.backchannelLogoutUri;
  const authPolicy = patch.authPolicy ? mergePolicy(current.authPolicy, patch.authPolicy, 'body.authPolicy') : current.authPolicy;
  // Only a changed group, logout URI or claim setting is checked, so an update never fails over one
  // it does not touch (a claim naming a since-removed group or profile field stays, left out at issuance).
  const { customClaims, forwardAuth } = await checkApplication(ctx, {
    id, clientType, redirectUris, postLogoutRedirectUris, grantTypes, webhookUrl, webhookSecret: patch.webhookSecret,
    ssoGroupId: patch.ssoGroupId, backchannelLogoutUri: patch.backchannelLogoutUri, profileFields: authPolicy.profile_fields,
    groupsFilter: patch.groupsFilter, customClaims: patch.customClaims, resourceServers: patch.resourceServers,
    forwardAuth: patch.forwardAuth, currentForwardAuth: current.forwardAuth,
  });
  checkAccentColor(patch.branding?.accentColor);
  if (patch.audience !== undefined) await assertAudienceFree(ctx.db, patch.audience, id);

  const now = ctx.clock.now();
  // Client secret follows the client type: a new web client gets one, a public client loses it.
  const clientSecret = clientType === 'web' && current.clientType !== 'web' ? newClientSecret() : undefined;
  const clientSecretHash = clientType === 'web' ? (clientSecret ? sha256(clientSecret) : current.clientSecretHash) : null;

  // Webhook secret: cleared with the URL; generated when a URL appears without one; on change the
  // old secret keeps signing alongside the new one for a day so receivers can roll over.
  // Stored sealed in PostgreSQL mode (db/secrets-at-rest.ts): compared in the clear, written sealed.
  const purpose = webhookSecretPurpose(id);
  const currentSecret = openNullable(ctx.db, current.webhookSecret, purpose);
  let webhookSecret = currentSecret;
  let generatedWebhookSecret: string | undefined;
  if (!webhookUrl) webhookSecret = null;
  else if (patch.webhookSecret) webhookSecret = patch.webhookSecret;
  else if (patch.webhookSecret === null || !webhookSecret) webhookSecret = generatedWebhookSecret = newWebhookSecret();
  const rotated = Boolean(currentSecret && webhookSecret && webhookSecret !== currentSecret);
  // LDAP turned on: a new service-account password, shown in this answer; turned off: none.
  const ldap = patch.ldap ?? current.ldap;
  const ldapPassword = ldap.enabled && !current.ldap.enabled ? newLdapPassword() : undefined;
  const ldapPasswordHash = !ldap.enabled ? null : ldapPassword ? sha256(ldapPassword) : current.ldapPasswordHash;

  const updated = await transaction(ctx.db, async (tx) => {
    const row = await one(tx
      .update(applications)
      .set({
        name: patch.name ?? current.name,
        audience: patch.audience ?? current.audience,
        redirectUris,
        postLogoutRedirectUris,
        clientType,
        clientSecretHash,
        webhookUrl,
        // Unchanged: the stored value as it is; the previous secret keeps the current one's seal.
        webhookSecret: webhookSecret === currentSecret ? current.webhookSecret : sealNullable(tx, webhookSecret, purpose),
        webhookPreviousSecret: rotated ? current.webhookSecret : webhookUrl ? current.webhookPreviousSecret : null,
        webhookPreviousSecretUntil: rotated
          ? new Date(now.getTime() + WEBHOOK_SECRET_OVERLAP_MS)
          : webhookUrl
            ? current.webhookPreviousSecretUntil
            : null,
        ssoGroupId: patch.ssoGroupId === undefined ? current.ssoGroupId : patch.ssoGroupId,
        authPolicy,
        grantTypes,
        backchannelLogoutUri,
        backchannelLogoutSessionRequired: patch.backchannelLogoutSessionRequired ?? current.backchannelLogoutSessionRequired,
        brandAccentColor: patch.branding?.accentColor === undefined ? current.brandAccentColor : patch.branding.accentColor,
        consent: patch.consent ?? current.consent,
        forwardAuth: forwardAuth === undefined ? current.forwardAuth : forwardAuth,
        unknownScopes: patch.unknownScopes ?? current.unknownScopes,
        groupsFilter: patch.groupsFilter === undefined ? current.groupsFilter : patch.groupsFilter,
        customClaims: customClaims ?? current.customClaims,
        resourceServers: patch.resourceServers ?? current.resourceServers,
        // New tokens only: tokens already issued keep the algorithm (and key) they were signed with.
        signingAlg: patch.signingAlg ?? current.signingAlg,
        ldap: { enabled: ldap.enabled },
        ldapPasswordHash,
        ...(options.preset !== undefined ? { preset: options.preset } : {}),
        updatedAt: now,
      })
      .where(eq(applications.id, id))
      .returning());
    if (forwardAuth !== undefined) await claimHosts(tx, id, forwardAuth?.hosts ?? []);
    await recordAudit(tx, now, {
      actor,
      action: 'application.updated',
      applicationId: id,
      target: id,
      details: {
        fields: Object.keys(patch),
        ...(rotated ? { webhookSecretRotated: true } : {}),
        ...(clientSecret ? { clientSecretIssued: true } : {}),
        ...(ldapPassword ? { ldapPasswordIssued: true } : {}),
        ...(options.preset ? { presetUpgraded: { preset: options.preset.id, version: options.preset.version } } : {}),
      },
    });
    await recordRedirectChange(tx, now, actor, current, row);
    return row;
  });
  if (redirectChange(current, updated)) ctx.wakeWebhooks();
  // Name, policy and forward-auth settings decide the checks of its protected hosts.
  forwardAuthChanged();
  return withSecretsShownOnce(ctx, updated, { clientSecret, webhookSecret: generatedWebhookSecret, ldapPassword });
}

/** `{field: {before, after}}` for each redirect list that changed, or undefined when none did. */
function redirectChange(before: Application, after: Application) {
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
async function recordRedirectChange(tx: Tx, now: Date, actor: string, before: Application, after: Application) {
  const details = redirectChange(before, after);
  if (!details) return;
  await recordAudit(tx, now, { actor, action: 'application.redirect_uris_changed', applicationId: after.id, target: after.id, details });
  await recordEvent(tx, now, after.id, 'application.redirect_uris_changed', { actor, ...details });
}

/**
 * Deletes the application at once: from here on no read and no token decision finds it (each
 * starts from its row). Its members, invitations, keys, refresh tokens, deliveries and session
 * marks go in bounded batches (data-lifecycle/purge.ts), finished inline when small; the
 * `application.purged` audit entry counts them.
 */
export async function deleteApplication(ctx: AppContext, id: string, actor: string) {
  await getApplication(ctx, id);
  const now = ctx.clock.now();
  const job = { kind: 'application', target: id, params: { realm: applicationRealm(id) }, actor } as const;
  await beginPurge(ctx, job, async (tx) => {
    await exec(tx.delete(applications).where(eq(applications.id, id)));
    // Its protected hosts are free again at once (a few rows; the purge plan finds none left).
    await claimHosts(tx, id, []);
    await forgetResourceServer(tx, id, now);
    await recordAudit(tx, now, { actor, action: 'application.deleted', applicationId: id, target: id });
  }, { cascade: false });
}

/**
 * A deleted application stops being a resource server of the others at once, so an application
 * created later with the same id does not inherit the right to introspect their tokens. Reads the
 * applications that list any (a handful of rows: the table holds the team's applications).
 */
async function forgetResourceServer(tx: Tx, id: string, now: Date): Promise<void> {
  const listing = await many(tx.select({ id: applications.id, resourceServers: applications.resourceServers }).from(applications).where(ne(applications.resourceServers, [])));
  for (const app of listing) {
    if (!app.resourceServers.includes(id)) continue;
    const resourceServers = app.resourceServers.filter((server) => server !== id);
    await exec(tx.update(applications).set({ resourceServers, updatedAt: now }).where(eq(applications.id, app.id)));
  }
}

/** A new client secret: generated, or `given` (a configuration file's reference: config-as-code). */
export async function rotateClientSecret(ctx: AppContext, id: string, actor: string, given?: string) {
  const app = await getApplication(ctx, id);
  if (app.clientType !== 'web') {
    throw conflict('not_confidential_client', `Application "${id}" is a ${app.clientType} client and has no client secret.`);
  }
  const clientSecret = given ?? newClientSecret();
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.update(applications).set({ clientSecretHash: sha256(clientSecret), updatedAt: now }).where(eq(applications.id, id)));
    await recordAudit(tx, now, { actor, action: 'application.client_secret_rotated', applicationId: id, target: id });
  });
  return { clientSecret };
}

/**
 * A new password for the application's LDAP service account (spec ldap.md): the old one stops
 * binding at once. Refused (409 `ldap_not_enabled`) while LDAP is off for the application.
 */
export async function rotateLdapPassword(ctx: AppContext, id: string, actor: string) {
  const app = await getApplication(ctx, id);
  if (!app.ldap.enabled) {
    throw conflict('ldap_not_enabled', `Application "${id}" does not have LDAP on; turn it on (PATCH {"ldap": {"enabled": true}}) first.`);
  }
  const password = newLdapPassword();
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.update(applications).set({ ldapPasswordHash: sha256(password), updatedAt: now }).where(eq(applications.id, id)));
    await recordAudit(tx, now, { actor, action: 'application.ldap_password_rotated', applicationId: id, target: id });
  });
  return { bindDn: applicationBindDn(ctx.config, id), password };
}

export async function updateAuthPolicy(ctx: AppContext, id: string, patch: AuthPolicyPatch, actor: string): Promise<AuthPolicy> {
  const app = await getApplication(ctx, id);
  const policy = mergePolicy(app.authPolicy, patch, 'body');
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.update(applications).set({ authPolicy: policy, updatedAt: now }).where(eq(applications.id, id)));
    await recordAudit(tx, now, { actor, action: 'auth_policy.updated', applicationId: id, target: id, details: { fields: Object.keys(patch) } });
  });
  forwardAuthChanged();
  return policy;
}
