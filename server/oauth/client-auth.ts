/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3, DESIGN §4.10):
 * `web` clients use `client_secret_basic` or `client_secret_post` (one method per request);
 * `spa` and `native` clients are public (`none`) and prove codes with PKCE instead. Secrets are
 * compared against their SHA-256 hash in constant time.
 */
import { eq, sql } from 'drizzle-orm';
import { applications, type Application, type GrantType } from '../db/schema.js';
import { findApplication } from '../applications/lookup.js';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { engineOf, one } from '../db/store.js';
import { matchesHash } from '../util/crypto.js';
import { invalidClient, invalidRequest } from './errors.js';
import { param, type OAuthCall, type RawParams } from './params.js';

interface Presented {
  clientId: string | undefined;
  secret: string | undefined;
  basic: boolean;
}

/** One half of Basic client credentials: RFC 6749 §2.3.1 form-urlencodes both before base64. Throws on a bad escape. */
export const decodeBasicPart = (s: string): string => decodeURIComponent(s.replaceAll('+', ' '));

function fromBasic(header: string): Presented {
  const match = /^Basic[ ]+([A-Za-z0-9+/=]+)[ ]*$/i.exec(header);
  const decoded = match?.[1] ? Buffer.from(match[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient('The Authorization header is not valid Basic credentials.', true);
  try {
    return { clientId: decodeBasicPart(decoded.slice(0, colon)), secret: decodeBasicPart(decoded.slice(colon + 1)), basic: true };
  } catch {
    throw invalidClient('The Authorization header is not valid Basic credentials.', true);
  }
}

function presented(request: Pick<OAuthCall, 'headers'>, body: RawParams): Presented {
  const header = request.headers.authorization;
  const bodyId = param(body, 'client_id');
  const bodySecret = param(body, 'client_secret');
  if (typeof header === 'string' && /^Basic /i.test(header)) {
    if (bodySecret !== undefined) throw invalidRequest('Use one client authentication method, not both Basic and client_secret.');
    const basic = fromBasic(header);
    if (bodyId !== undefined && bodyId !== basic.clientId) throw invalidRequest('client_id does not match the Basic credentials.');
    return basic;
  }
  return { clientId: bodyId, secret: bodySecret, basic: false };
}

export async function findClient(ctx: AppContext, clientId: string): Promise<Application | undefined> {
  return findApplication(ctx.db, clientId);
}

/** What the token, revocation, introspection and device endpoints need of the calling client. */
export type OAuthClient = Pick<
  Application,
  'id' | 'clientType' | 'clientSecretHash' | 'grantTypes' | 'audience' | 'authPolicy' | 'signingAlg' | 'unknownScopes' | 'groupsFilter' | 'customClaims' | 'accessTokenTtl'
>;

/** The lifetime of a client's access tokens: GATEHOUSE_ACCESS_TOKEN_TTL, under the client's own cap (the panel's built-in client: 10 minutes). */
export function accessTokenTtlOf(client: Pick<OAuthClient, 'accessTokenTtl'>, configured: number): number {
  return client.accessTokenTtl === null ? configured : Math.min(configured, client.accessTokenTtl);
}

/**
 * The client look-up of every token request: only the columns above. SQLite: in SQL on
 * better-sqlite3, run synchronously (issue 27: the whole application row through drizzle —
 * redirect URIs, logout and webhook settings mapped on every grant — cost several times as
 * much). PostgreSQL: the same columns through a drizzle statement prepared once (an await either way).
 */
const clientById = preparedPerDb((db): ((id: string) => OAuthClient | undefined | Promise<OAuthClient | undefined>) => {
  if (engineOf(db) === 'postgres') return pgClientById(db);
  const statement = db.$client.prepare<
    [string],
    {
      id: string; clientType: Application['clientType']; clientSecretHash: string | null; grantTypes: string; audience: string; authPolicy: string;
      signingAlg: Application['signingAlg']; unknownScopes: Application['unknownScopes']; groupsFilter: string | null; customClaims: string;
      accessTokenTtl: number | null;
    }
  >(
    `SELECT id, client_type AS clientType, client_secret_hash AS clientSecretHash, grant_types AS grantTypes, audience,
            auth_policy AS authPolicy, signing_alg AS signingAlg, unknown_scopes AS unknownScopes, groups_filter AS groupsFilter,
            custom_claims AS customClaims, access_token_ttl AS accessTokenTtl
     FROM applications WHERE id = ?`,
  );
  return (id: string): OAuthClient | undefined => {
    const row = statement.get(id);
    return (
      row && {
        ...row,
        grantTypes: JSON.parse(row.grantTypes) as GrantType[],
        authPolicy: JSON.parse(row.authPolicy) as Application['authPolicy'],
        groupsFilter: row.groupsFilter === null ? null : parsedSetting<string[]>(row.groupsFilter),
        customClaims: parsedSetting<Application['customClaims']>(row.customClaims),
      }
    );
  };
});

/**
 * The claim settings as parsed JSON, parsed once per distinct text: they change only when an
 * administrator saves them, and every grant reads them (a 5-claim list took ≈ 6 µs to parse). The
 * values are shared between requests and never changed by them. At most SETTINGS_CACHED texts are
 * kept (a team's applications); past that the cache starts again.
 */
const SETTINGS_CACHED = 256;
const parsedSettings = new Map<string, unknown>();
function parsedSetting<T>(text: string): T {
  let value = parsedSettings.get(text);
  if (value === undefined) {
    if (parsedSettings.size >= SETTINGS_CACHED) parsedSettings.clear();
    value = JSON.parse(text) as unknown;
    parsedSettings.set(text, value);
  }
  return value as T;
}

function pgClientById(db: Db): (id: string) => Promise<OAuthClient | undefined> {
  const a = applications;
  const statement = db
    .select({
      id: a.id, clientType: a.clientType, clientSecretHash: a.clientSecretHash, grantTypes: a.grantTypes, audience: a.audience, authPolicy: a.authPolicy,
      signingAlg: a.signingAlg, unknownScopes: a.unknownScopes, groupsFilter: a.groupsFilter, customClaims: a.customClaims,
      accessTokenTtl: a.accessTokenTtl,
    })
    .from(a)
    .where(eq(a.id, sql.placeholder('id')))
    .prepare();
  return async (id) => await one(statement, { id });
}

/**
 * The columns above of the application with `id` (userinfo reads its claim settings): synchronous
 * on SQLite, a promise on PostgreSQL.
 */
export const oauthClientById = (db: Db, id: string) => clientById(db)(id);

/** The client's secret (or its absence) checked against what it presented. */
function checkClient(app: OAuthClient | undefined, secret: string | undefined, basic: boolean): OAuthClient {
  if (!app) throw invalidClient('Client authentication failed.', basic);
  if (app.clientType === 'web') {
    if (secret === undefined) throw invalidClient('This confidential client must authenticate with its client secret.', basic);
    if (!app.clientSecretHash || !matchesHash(secret, app.clientSecretHash)) {
      throw invalidClient('Client authentication failed.', basic);
    }
  } else if (secret !== undefined || basic) {
    throw invalidClient('Public clients do not authenticate with a client secret; use PKCE.', basic);
  }
  return app;
}

/**
 * Authenticates the calling client or throws `invalid_client` (401). Synchronous on SQLite (the
 * token endpoint's hot path awaits nothing for it); a promise on PostgreSQL.
 */
export function authenticateClient(ctx: AppContext, request: Pick<OAuthCall, 'headers'>, body: RawParams): OAuthClient | Promise<OAuthClient> {
  const { clientId, secret, basic } = presented(request, body);
  if (clientId === undefined) throw invalidClient('Client authentication is required (client_id).');
  const app = clientById(ctx.db)(clientId);
  return app instanceof Promise ? app.then((found) => checkClient(found, secret, basic)) : checkClient(app, secret, basic);
}
