/** The control panel's overview: what this installation is and how much it holds. */
import { and, count, eq, gt } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { applications, invitations, memberships, people, ssoGroups } from '../db/schema.js';
import { activeKeyId } from '../oauth/keys.js';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tlsPaths } from '../ops/tls.js';
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
  /** The local CA's SHA-256 fingerprint, for people to compare when they install it; null without one. */
  caFingerprint: string | null;
}

export function overview(ctx: AppContext, startedAt: Date): Overview {
  const now = ctx.clock.now();
  const db = ctx.db;
  const issuer = ctx.config.issuer;
  // The local CA only when this server serves it (GATEHOUSE_TLS=auto), as /ca.pem does.
  const { dataDir, tls } = ctx.config;
  const caPath = tls.mode === 'auto' && dataDir !== ':memory:' && existsSync(tlsPaths(dataDir).ca) ? tlsPaths(dataDir).ca : undefined;
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
    // The key that signs now (a published next key waits; none before the OAuth feature made one).
    signingKey: activeKeyId(db, now),
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    jwksUrl: `${issuer}/api/auth/jwks`,
    caCertificateUrl: caPath ? `${issuer}/ca.pem` : null,
    caFingerprint: caPath ? new X509Certificate(readFileSync(caPath)).fingerprint256 : null,
  };
}
