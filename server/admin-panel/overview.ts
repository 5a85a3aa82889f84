/** The control panel's overview: what this installation is and how much it holds. */
import { and, count, eq, gt } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { applications, invitations, memberships, people, ssoGroups } from '../db/schema.js';
import { existsSync } from 'node:fs';
import { tlsPaths } from '../ops/tls.js';
import { activeKey } from '../ops/key-rotation.js';
import { packageVersion } from './paths.js';

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
}

export function overview(ctx: AppContext, startedAt: Date): Overview {
  const now = ctx.clock.now();
  const db = ctx.db;
  // The key that signs now (a published next key waits its turn).
  const key = activeKey(ctx.db, now);
  const issuer = ctx.config.issuer;
  return {
    version: packageVersion(),
    issuer,
    uptimeSeconds: Math.max(0, Math.floor((now.getTime() - startedAt.getTime()) / 1000)),
    counts: {
      applications: db.select({ n: count() }).from(applications).get()?.n ?? 0,
      people: db.select({ n: count() }).from(people).get()?.n ?? 0,
      memberships: db.select({ n: count() }).from(memberships).get()?.n ?? 0,
      // `expired` is derived: a pending invitation past its expiry no longer counts.
      pendingInvitations:
        db
          .select({ n: count() })
          .from(invitations)
          .where(and(eq(invitations.state, 'pending'), gt(invitations.expiresAt, now)))
          .get()?.n ?? 0,
      ssoGroups: db.select({ n: count() }).from(ssoGroups).get()?.n ?? 0,
    },
    signingKey: key?.kid ?? null,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    jwksUrl: `${issuer}/api/auth/jwks`,
    caCertificateUrl:
      ctx.config.dataDir !== ':memory:' && existsSync(tlsPaths(ctx.config.dataDir).ca) ? `${issuer}/ca.pem` : null,
  };
}
