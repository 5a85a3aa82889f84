/**
 * The one API client of the panel: openapi-fetch typed by `schema.d.ts`, which is generated from
 * the server's own OpenAPI document (scripts/api-types.ts). A route whose path, parameters, body or
 * answer changes on the server fails the renderer's type check (`npm run typecheck`).
 *
 * Every request carries the admin token; every failure becomes an ApiError whose message is the
 * problem-details text in words (DESIGN §4.1, ./problem.ts).
 *
 *   const app = await ok(client.GET('/api/admin/applications/{id}', { params: { path: { id } } }));
 */
import createClient from 'openapi-fetch';
import { session } from '../session';
import type { paths } from './schema';
import { ApiError, type Problem } from './problem';

export { ApiError, describeProblem, fieldErrors, type Problem } from './problem';
export type { paths } from './schema';

/**
 * Sends a request with the admin token (unless the caller set its own Authorization header, as
 * the sign-in screen does to try a token) to the configured server.
 */
async function panelFetch(request: Request, retried = false): Promise<Response> {
  const base = session.serverUrl();
  if (base) {
    const url = new URL(request.url);
    request = new Request(base + url.pathname + url.search, request);
  }
  const explicit = request.headers.has('authorization');
  const token = explicit ? undefined : session.token();
  // The body can be read once: keep a copy for the one retry below.
  const copy = explicit || retried ? undefined : request.clone();
  if (token) request.headers.set('authorization', `Bearer ${token}`);
  request.headers.set('accept', 'application/json, application/problem+json');
  let response: Response;
  try {
    response = await fetch(request);
  } catch {
    throw new ApiError(0, { detail: 'The Gatehouse server cannot be reached. Is it running?' });
  }
  if (response.status === 401 && token && copy && new URL(request.url).pathname.startsWith('/api/admin')) {
    // A newer token may exist: one signed in meanwhile, or (desktop) one rotated since the window
    // opened, which the shell hands out when asked again. Retry once with it.
    const current = session.token();
    const newer = token !== current ? Boolean(current) : await session.reload(token);
    if (newer) return panelFetch(copy, true);
    if (token === session.token()) session.expired();
  }
  return response;
}

export const client = createClient<paths>({ fetch: (request) => panelFetch(request) });

type Answer = { data?: unknown; error?: unknown; response: Response };
/** What a successful call returns: its JSON body, or nothing for 204. */
export type Data<R extends Answer> = [NonNullable<R['data']>] extends [never] ? void : NonNullable<R['data']>;

/** Awaits an openapi-fetch call: its data on success, an ApiError (in words) otherwise. */
export async function ok<R extends Answer>(call: Promise<R>): Promise<Data<R>> {
  const { data, error, response } = await call;
  if (response.ok) return data as Data<R>;
  const problem: Problem = error && typeof error === 'object' ? (error as Problem) : { detail: typeof error === 'string' && error ? error.slice(0, 300) : undefined };
  if (response.status === 404 && problem.code === 'route_not_found') {
    throw new ApiError(404, { ...problem, detail: 'This server does not offer this feature yet.' });
  }
  throw new ApiError(response.status, problem);
}

export const enc = encodeURIComponent;

// ---- Wire types, named for the screens; all of them come from the generated schema ----

type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;
/** The JSON body of a path's successful (200 or 201) answer. */
export type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: infer A }
    ? Json<A>
    : R extends { 201: infer A }
      ? Json<A>
      : R extends { 202: infer A }
        ? Json<A>
        : never
  : never;
/** The JSON request body of a path's method. */
export type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;

export type Application = Ok<'/api/admin/applications/{id}', 'get'>;
/** The answer to creating an application: the record plus the secrets shown once. */
export type CreatedApplication = Ok<'/api/admin/applications', 'post'>;
export type ClientType = Application['clientType'];
export type AuthPolicy = Application['authPolicy'];
export type SignupPolicy = AuthPolicy['signup_policy'];
export type MfaPolicy = AuthPolicy['mfa'];
export type ProfileField = AuthPolicy['profile_fields'][number];
export type SsoGroup = Ok<'/api/admin/sso-groups/{id}', 'get'>;
export type Group = Ok<'/api/admin/groups/{id}', 'get'>;
export type GroupMember = Ok<'/api/admin/groups/{id}/members', 'get'>['members'][number];
export type Person = Ok<'/api/admin/people/{id}', 'get'>;
export type Provider = Ok<'/api/admin/auth/providers', 'get'>['providers'][number];
export type Member = Ok<'/api/admin/applications/{id}/users', 'get'>['users'][number];
/** One member read alone, with their second factors (counts and dates). */
export type MemberDetail = Ok<'/api/admin/applications/{id}/users/{uid}', 'get'>;
export type SecondFactorSummary = MemberDetail['secondFactor'];
export type Invitation = Ok<'/api/admin/applications/{id}/invitations', 'get'>['invitations'][number];
export type CreatedInvitations = Ok<'/api/admin/applications/{id}/invitations', 'post'>;
export type ApiKey = Ok<'/api/admin/applications/{id}/api-keys', 'get'>['apiKeys'][number];
export type CreatedApiKey = Ok<'/api/admin/applications/{id}/api-keys', 'post'>;
export type Delivery = Ok<'/api/admin/applications/{id}/webhook-deliveries', 'get'>['deliveries'][number];
export type LogoutDelivery = Ok<'/api/admin/applications/{id}/backchannel-logouts', 'get'>['deliveries'][number];
export type GrantType = Application['grantTypes'][number];
export type Overview = Ok<'/api/admin/overview', 'get'>;
export type AuditPage = Ok<'/api/admin/audit-log', 'get'>;
export type AuditEntry = AuditPage['entries'][number];
export type SigningKey = Ok<'/api/admin/keys', 'get'>['keys'][number];
export type Backup = Ok<'/api/admin/backups', 'get'>['backups'][number];
export type PresetSummary = Ok<'/api/admin/presets', 'get'>['presets'][number];
export type PresetDetail = Ok<'/api/admin/presets/{id}', 'get'>;
export type Setup = Ok<'/api/admin/applications/{id}/setup', 'get'>;
export type PresetStatus = Ok<'/api/admin/applications/{id}/preset', 'get'>;
