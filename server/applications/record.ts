/**
 * An application as the admin API shows it (applications/schemas.ts `applicationSchemas().record`):
 * the core fields and each plugin field's value (plugin-api/application-fields.ts), in the
 * record's order. Secrets never appear here, only whether a webhook secret is set.
 */
import type { AppContext } from '../context.js';
import type { Application } from '../db/schema.js';
import { iso } from '../http/schemas.js';
import { placeAfter, type ApplicationFieldRecords } from '../plugin-api/application-fields.js';
import { authPolicyOf } from './rules.js';
import { brandingRecord } from './branding.js';

/** The core record, and every plugin field's value by name (`ApplicationFieldRecords`). */
export type ApplicationRecord = ReturnType<typeof coreRecord> & Partial<ApplicationFieldRecords>;

function coreRecord(app: Application, issuer: string) {
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
    unknownScopes: app.unknownScopes,
    groupsFilter: app.groupsFilter,
    customClaims: app.customClaims,
    resourceServers: app.resourceServers,
    signingAlg: app.signingAlg,
    preset: app.preset ? { id: app.preset.id, version: app.preset.version } : null,
    createdAt: iso(app.createdAt)!,
    updatedAt: iso(app.updatedAt)!,
  };
}

/** The records of `apps` (what the plugin fields keep in tables of their own is read once for all). */
export async function applicationRecords(ctx: AppContext, apps: Application[]): Promise<ApplicationRecord[]> {
  const fields = ctx.registries.applicationFields.all;
  const loaded = new Map<string, Map<string, unknown>>();
  for (const field of fields) if (field.load && apps.length) loaded.set(field.name, await field.load(ctx.db, apps.map((a) => a.id)));
  return apps.map((app) => {
    const extra = fields.map((field) => ({ after: field.after, entries: [[field.name, field.toRecord(app, loaded.get(field.name)?.get(app.id))]] as [string, unknown][] }));
    return Object.fromEntries(placeAfter(Object.entries(coreRecord(app, ctx.config.issuer)), extra)) as ApplicationRecord;
  });
}

export async function applicationRecord(ctx: AppContext, app: Application): Promise<ApplicationRecord> {
  return (await applicationRecords(ctx, [app]))[0]!;
}
