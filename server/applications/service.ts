/**
 * Application rules in action (DESIGN §4.3–4.4): creation with defaults, updates, cascading
 * delete and auth-policy changes, each written and audited in one transaction. What may be
 * written is rules.ts; the secrets are secrets.ts; the record the API answers is record.ts. The
 * fields plugins registered (plugin-api/application-fields.ts) are checked, written and shown with
 * the core's, and every change is announced (`applicationChanged`, plugin-api/hooks.ts).
 */
import { and, asc, eq, inArray, ne } from 'drizzle-orm';
import { applications, type Application, type AppliedPreset, type AuthPolicy } from '../db/schema.js';
import type { AppContext } from '../context.js';
import type { Tx } from '../db/client.js';
import { recordAudit } from '../audit/record.js';
import { conflict, validationFailed, type FieldError } from '../http/problem.js';
import { afterCursor, toPage } from '../http/pagination.js';
import { PANEL_CLIENT_ID } from '../http/schemas.js';
import { applicationRealm } from './realms.js';
import { beginPurge, isPurging } from '../data-lifecycle/purge.js';
import { findApplication, getApplication } from './lookup.js';
import { DEFAULT_GRANT_TYPES, type ApplicationCreate, type ApplicationPatch, type AuthPolicyPatch } from './schemas.js';
import { sealNullable } from '../db/secrets-at-rest.js';
import { webhookSecretPurpose } from '../webhooks/sign.js';
import { exec, many, one, transaction } from '../db/store.js';
import type { ApplicationFieldWrite } from '../plugin-api/application-fields.js';
import { applicationProblems, assertAudienceFree, checkChange, mergePolicy, recordRedirectChange, redirectChange } from './rules.js';
import { createClientSecret, newWebhookSecret, updatedClientSecret, updatedWebhookSecret } from './secrets.js';
import { applicationRecord, applicationRecords } from './record.js';

export { applicationProblems, getApplication };

/**
 * A page of applications; `only`: just these (an app manager's, an API key's). The panel's
 * built-in client (http/schemas.ts `PANEL_CLIENT_ID`) is never listed.
 */
export async function listApplications(ctx: AppContext, limit: number, cursor?: string, only?: readonly string[]) {
  const rows = await many(ctx.db
    .select()
    .from(applications)
    .where(and(afterCursor(applications.createdAt, applications.id, cursor), ne(applications.id, PANEL_CLIENT_ID), only ? inArray(applications.id, [...only]) : undefined))
    .orderBy(asc(applications.createdAt), asc(applications.id))
    .limit(limit + 1));
  const page = toPage(rows, limit, (a) => ({ t: a.createdAt.getTime(), id: a.id }));
  return { applications: await applicationRecords(ctx, page.items), nextCursor: page.nextCursor };
}

/** The record plus the secrets that exist only in this one response (DESIGN §4.3). */
async function withSecretsShownOnce(ctx: AppContext, app: Application, secrets: { clientSecret?: string | undefined; webhookSecret?: string | undefined }, fields: ApplicationFieldWrite[]) {
  return {
    ...(await applicationRecord(ctx, app)),
    ...(secrets.clientSecret ? { clientSecret: secrets.clientSecret } : {}),
    ...(secrets.webhookSecret ? { webhookSecret: secrets.webhookSecret } : {}),
    ...Object.assign({}, ...fields.map((f) => f.secrets ?? {})) as Record<string, string | Record<string, string>>,
  };
}

/** The plugin fields' columns, audit details and side-table writes, together. */
const columnsOf = (fields: ApplicationFieldWrite[]) => Object.assign({}, ...fields.map((f) => f.columns ?? {})) as NonNullable<ApplicationFieldWrite['columns']>;
const auditOf = (fields: ApplicationFieldWrite[]) => Object.assign({}, ...fields.map((f) => f.audit ?? {})) as Record<string, unknown>;
async function writeFields(tx: Tx, now: Date, fields: ApplicationFieldWrite[]) {
  for (const field of fields) await field.written?.(tx, now);
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
  const { errors, authPolicy, customClaims, fields } = await checkChange(ctx, input.id, input, undefined);
  if (errors.length) throw validationFailed(errors);

  const clientSecret = createClientSecret(clientType, options.clientSecret);
  const generatedWebhookSecret = input.webhookUrl && !input.webhookSecret ? newWebhookSecret() : undefined;
  const now = ctx.clock.now();

  const created = await transaction(ctx.db, async (tx) => {
    if (await findApplication(tx, input.id)) {
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
        clientSecretHash: clientSecret.hash,
        webhookUrl: input.webhookUrl ?? null,
        webhookSecret: input.webhookUrl ? sealNullable(tx, input.webhookSecret ?? generatedWebhookSecret ?? null, webhookSecretPurpose(input.id)) : null,
        ssoGroupId: input.ssoGroupId ?? null,
        authPolicy,
        grantTypes,
        backchannelLogoutUri: input.backchannelLogoutUri ?? null,
        backchannelLogoutSessionRequired: input.backchannelLogoutSessionRequired ?? true,
        brandAccentColor: input.branding?.accentColor ?? null,
        consent: input.consent ?? 'implicit',
        unknownScopes: input.unknownScopes ?? 'reject',
        groupsFilter: input.groupsFilter ?? null,
        customClaims: customClaims ?? [],
        resourceServers: input.resourceServers ?? [],
        signingAlg: input.signingAlg ?? 'RS256',
        ...columnsOf(fields),
        preset: preset ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .returning());
    await writeFields(tx, now, fields);
    await recordAudit(tx, now, {
      actor, action: 'application.created', applicationId: row.id, target: row.id,
      details: { name: row.name, clientType, ...(preset ? { preset: preset.id, presetVersion: preset.version } : {}) },
    });
    // Plugins hear of it in the same transaction (named administrators join it: administrators/plugin.ts).
    await ctx.hooks.emit('applicationChanged', { tx, now, applicationId: row.id, change: 'created', actor });
    return row;
  });
  return withSecretsShownOnce(ctx, created, { clientSecret: clientSecret.shown, webhookSecret: generatedWebhookSecret }, fields);
}

/**
 * `options.preset`: a new record of the app preset (an upgrade taken, presets/upgrade.ts; a
 * configuration file's, config-as-code), written in the same transaction; null: none any more.
 * `options.manages`: whether the caller administers another application too (an app manager's
 * own only; everyone else's all), for the rules that compare applications (forward auth's hosts).
 */
export async function updateApplication(
  ctx: AppContext, id: string, patch: ApplicationPatch, actor: string,
  options: { preset?: AppliedPreset | null; manages?: (applicationId: string) => boolean } = {},
) {
  const current = await getApplication(ctx, id);
  const clientType = patch.clientType ?? current.clientType;
  const redirectUris = patch.redirectUris ?? current.redirectUris;
  const postLogoutRedirectUris = patch.postLogoutRedirectUris === undefined ? current.postLogoutRedirectUris : patch.postLogoutRedirectUris;
  const webhookUrl = patch.webhookUrl === undefined ? current.webhookUrl : patch.webhookUrl;
  const grantTypes = patch.grantTypes ?? current.grantTypes;
  const backchannelLogoutUri = patch.backchannelLogoutUri === undefined ? current.backchannelLogoutUri : patch.backchannelLogoutUri;
  // Only a changed group, logout URI or claim setting is checked, so an update never fails over one
  // it does not touch (a claim naming a since-removed group or profile field stays, left out at issuance).
  const { errors, authPolicy, customClaims, fields } = await checkChange(ctx, id, patch, current, options.manages);
  if (errors.length) throw validationFailed(errors);
  if (patch.audience !== undefined) await assertAudienceFree(ctx.db, patch.audience, id);

  const now = ctx.clock.now();
  const clientSecret = updatedClientSecret(current, clientType);
  const webhookSecret = updatedWebhookSecret(ctx, current, webhookUrl, patch.webhookSecret, now);

  const updated = await transaction(ctx.db, async (tx) => {
    const row = await one(tx
      .update(applications)
      .set({
        name: patch.name ?? current.name,
        audience: patch.audience ?? current.audience,
        redirectUris,
        postLogoutRedirectUris,
        clientType,
        clientSecretHash: clientSecret.hash,
        webhookUrl,
        ...webhookSecret.columns(tx),
        ssoGroupId: patch.ssoGroupId === undefined ? current.ssoGroupId : patch.ssoGroupId,
        authPolicy,
        grantTypes,
        backchannelLogoutUri,
        backchannelLogoutSessionRequired: patch.backchannelLogoutSessionRequired ?? current.backchannelLogoutSessionRequired,
        brandAccentColor: patch.branding?.accentColor === undefined ? current.brandAccentColor : patch.branding.accentColor,
        consent: patch.consent ?? current.consent,
        unknownScopes: patch.unknownScopes ?? current.unknownScopes,
        groupsFilter: patch.groupsFilter === undefined ? current.groupsFilter : patch.groupsFilter,
        customClaims: customClaims ?? current.customClaims,
        resourceServers: patch.resourceServers ?? current.resourceServers,
        // New tokens only: tokens already issued keep the algorithm (and key) they were signed with.
        signingAlg: patch.signingAlg ?? current.signingAlg,
        ...columnsOf(fields),
        ...(options.preset !== undefined ? { preset: options.preset } : {}),
        updatedAt: now,
      })
      .where(eq(applications.id, id))
      .returning());
    await writeFields(tx, now, fields);
    await recordAudit(tx, now, {
      actor,
      action: 'application.updated',
      applicationId: id,
      target: id,
      details: {
        fields: Object.keys(patch),
        ...(webhookSecret.rotated ? { webhookSecretRotated: true } : {}),
        ...(clientSecret.shown ? { clientSecretIssued: true } : {}),
        ...auditOf(fields),
        ...(options.preset ? { presetUpgraded: { preset: options.preset.id, version: options.preset.version } } : {}),
      },
    });
    await recordRedirectChange(tx, now, actor, current, row);
    // Name, policy and the plugins' settings decide what their checks answer (forward auth's protected hosts).
    await ctx.hooks.emit('applicationChanged', { tx, now, applicationId: id, change: 'updated', actor });
    return row;
  });
  if (redirectChange(current, updated)) ctx.wakeWebhooks();
  return withSecretsShownOnce(ctx, updated, { clientSecret: clientSecret.shown, webhookSecret: webhookSecret.generated }, fields);
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
    for (const field of ctx.registries.applicationFields.all) await field.deleted?.(tx, id, now);
    await forgetResourceServer(tx, id, now);
    await recordAudit(tx, now, { actor, action: 'application.deleted', applicationId: id, target: id });
    await ctx.hooks.emit('applicationChanged', { tx, now, applicationId: id, change: 'deleted', actor });
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

export async function updateAuthPolicy(ctx: AppContext, id: string, patch: AuthPolicyPatch, actor: string): Promise<AuthPolicy> {
  const app = await getApplication(ctx, id);
  const errors: FieldError[] = [];
  const policy = mergePolicy(app.authPolicy, patch, 'body', errors);
  if (errors.length) throw validationFailed(errors);
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.update(applications).set({ authPolicy: policy, updatedAt: now }).where(eq(applications.id, id)));
    await recordAudit(tx, now, { actor, action: 'auth_policy.updated', applicationId: id, target: id, details: { fields: Object.keys(patch) } });
    await ctx.hooks.emit('applicationChanged', { tx, now, applicationId: id, change: 'updated', actor });
  });
  return policy;
}
