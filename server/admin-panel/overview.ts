/** The control panel's overview: what this installation is and how much it holds. */
import { and, count, eq, gt, ne } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { applications, invitations, ssoGroups } from '../db/schema.js';
import { PANEL_CLIENT_ID } from '../http/schemas.js';
import { keptRowCounts } from '../db/row-counts.js';
import { existsSync } from 'node:fs';
import { tlsPaths } from '../ops/tls.js';
import { activeKey } from '../ops/key-rotation.js';
import { packageVersion } from '../util/install-paths.js';
import { one } from '../db/store.js';

export interface Overview {
  version: string;
  issuer: string;
  uptimeSeconds: number;
  counts: { applications: number; people: number; memberships: number; pendingInvitations: number; ssoGroups: number };
  signingKey: string | null;
  discoveryUrl: string;
  jwksUrl: string;
  /** Where devices download the local CA (LAN TLS mode), or null when there is no local CA. */
  caCertificateUrl: string | null;
  /** And each plugin's part (plugin-api/registries.ts `overviewSections`): `ldap`, the LDAP directory's listener. */
  [section: string]: unknown;
}

/**
 * Counts without counting the tables that grow: people and memberships come from `row_counts`
 * (kept by triggers, db/row-counts.ts); pending invitations are counted through their (state, expires_at) index,
 * which only holds live ones; applications and SSO groups are a handful of rows.
 */
async function counts(ctx: AppContext, now: Date): Promise<Overview['counts']> {
  const db = ctx.db;
  const kept = await keptRowCounts(db);
  return {
    // The panel's built-in client is not one of the installation's applications.
    applications: (await one(db.select({ n: count() }).from(applications).where(ne(applications.id, PANEL_CLIENT_ID))))?.n ?? 0,
    people: kept.get('people') ?? 0,
    memberships: kept.get('memberships') ?? 0,
    // `expired` is derived: a pending invitation past its expiry no longer counts.
    pendingInvitations:
      (await one(db
        .select({ n: count() })
        .from(invitations)
        .where(and(eq(invitations.state, 'pending'), gt(invitations.expiresAt, now)))))?.n ?? 0,
    ssoGroups: (await one(db.select({ n: count() }).from(ssoGroups)))?.n ?? 0,
  };
}

export async function overview(ctx: AppContext, startedAt: Date): Promise<Overview> {
  const now = ctx.clock.now();
  // The key that signs now (a published next key waits its turn).
  const key = await activeKey(ctx.db, now);
  const issuer = ctx.config.issuer;
  return {
    version: packageVersion(),
    issuer,
    uptimeSeconds: Math.max(0, Math.floor((now.getTime() - startedAt.getTime()) / 1000)),
    counts: await counts(ctx, now),
    signingKey: key?.kid ?? null,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    jwksUrl: `${issuer}/api/auth/jwks`,
    caCertificateUrl:
      ctx.config.dataDir !== ':memory:' && existsSync(tlsPaths(ctx.config.dataDir).ca) ? `${issuer}/ca.pem` : null,
    ...Object.fromEntries(ctx.registries.overviewSections.all.map((section) => [section.name, section.value()])),
  };
}
