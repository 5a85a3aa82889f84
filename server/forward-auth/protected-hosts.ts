/**
 * Which application protects a host, answered from memory: every request through a proxy costs
 * one check (spec forward-auth.md, "Performance"), so the host table (at most 20 rows per
 * application) and the applications that own hosts are read once into a map, and a check costs at
 * most four map lookups (hosts.ts `candidatePatterns`), whatever the number of applications or
 * people.
 *
 * The map is read again on the next check after any application write in this process
 * (`forwardAuthChanged`, called by the applications service and `claimHosts`), and at least every
 * RELOAD_MS: in PostgreSQL mode every POSTGRES_RELOAD_MS, since other instances change
 * applications too (the same bound as the revocation rule, spec "Revocation within 5 seconds").
 */
import { eq, inArray } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { applications, forwardAuthHosts, type Application } from '../db/schema.js';
import { engineOf, many } from '../db/store.js';
import { candidatePatterns, parseRequestHost, type RequestHost } from './hosts.js';

const RELOAD_MS = 60_000;
const POSTGRES_RELOAD_MS = 2_000;
/** Request host texts remembered with their answer (forgotten all at once when full, and on every reload). */
const REQUEST_HOSTS_REMEMBERED = 1_000;

/** What `inMemory` answers when the maps must be read again first. */
export const STALE = Symbol('stale');

/** Bumped by every application write in this process; every map compares it. */
let version = 0;

/** Application settings changed (forward auth, policy, deletion): maps and cached decisions are read again. */
export function forwardAuthChanged(): void {
  version += 1;
}

/** The current change count (cached check decisions remember the one they were made under). */
export const forwardAuthVersion = (): number => version;

export interface ProtectedSite {
  app: Application;
  /** The matched pattern (`*.media.lan.example`). */
  pattern: string;
  host: RequestHost;
}

export class ProtectedHosts {
  private byPattern = new Map<string, Application>();
  private byId = new Map<string, Application>();
  /** The answer per request host text, so a busy site skips parsing (IDNA) and the pattern lookups. */
  private byRequestHost = new Map<string, ProtectedSite | null>();
  private loadedVersion = -1;
  private loadedAt = 0;
  private loading: Promise<void> | undefined;
  private readonly maxAgeMs: number;

  constructor(private readonly ctx: AppContext) {
    this.maxAgeMs = engineOf(ctx.db) === 'postgres' ? POSTGRES_RELOAD_MS : RELOAD_MS;
  }

  /** The application protecting the host a request names (`Host`-style text), if any. */
  async find(rawHost: string | undefined): Promise<ProtectedSite | undefined> {
    if (this.stale()) await this.reload();
    return this.match(rawHost);
  }

  /**
   * The same without waiting, when the maps are fresh; STALE when they must be read first (the
   * check's answer from memory, check.ts, then takes the awaited way).
   */
  inMemory(rawHost: string | undefined): ProtectedSite | undefined | typeof STALE {
    return this.stale() ? STALE : this.match(rawHost);
  }

  private match(rawHost: string | undefined): ProtectedSite | undefined {
    if (!rawHost) return undefined;
    const known = this.byRequestHost.get(rawHost);
    if (known !== undefined) return known ?? undefined;
    const host = parseRequestHost(rawHost);
    let site: ProtectedSite | undefined;
    for (const pattern of host ? candidatePatterns(host) : []) {
      const app = this.byPattern.get(pattern);
      if (app) {
        site = Object.freeze({ app, pattern, host: host! });
        break;
      }
    }
    if (this.byRequestHost.size >= REQUEST_HOSTS_REMEMBERED) this.byRequestHost.clear();
    this.byRequestHost.set(rawHost, site ?? null);
    return site;
  }

  /** The application with this id, if it protects any host (from the same map). */
  async application(id: string): Promise<Application | undefined> {
    if (this.stale()) await this.reload();
    return this.byId.get(id);
  }

  private stale(): boolean {
    return this.loadedVersion !== version || Date.now() - this.loadedAt > this.maxAgeMs;
  }

  private reload(): Promise<void> {
    this.loading ??= (async () => {
      const seen = version;
      try {
        const rows = await many(this.ctx.db
          .select({ host: forwardAuthHosts.host, app: applications })
          .from(forwardAuthHosts)
          .innerJoin(applications, eq(applications.id, forwardAuthHosts.applicationId)));
        const byPattern = new Map<string, Application>();
        const byId = new Map<string, Application>();
        for (const row of rows) {
          if (!row.app.forwardAuth) continue;
          // One object per application, so both maps answer the same row.
          const app = byId.get(row.app.id) ?? row.app;
          byId.set(app.id, app);
          byPattern.set(row.host, app);
        }
        this.byPattern = byPattern;
        this.byId = byId;
        this.byRequestHost = new Map();
        this.loadedVersion = seen;
        this.loadedAt = Date.now();
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }
}

/**
 * The application protecting a host, read from the database (for pages outside the plugin, such
 * as the consent page; the checks use the map above): one indexed read of at most four keys.
 */
export async function findProtectingApplication(db: Db, rawHost: string): Promise<Application | undefined> {
  const host = parseRequestHost(rawHost);
  if (!host) return undefined;
  const candidates = candidatePatterns(host);
  const rows = await many(db
    .select({ host: forwardAuthHosts.host, app: applications })
    .from(forwardAuthHosts)
    .innerJoin(applications, eq(applications.id, forwardAuthHosts.applicationId))
    .where(inArray(forwardAuthHosts.host, candidates)));
  for (const pattern of candidates) {
    const found = rows.find((row) => row.host === pattern && row.app.forwardAuth);
    if (found) return found.app;
  }
  return undefined;
}
