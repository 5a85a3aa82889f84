/**
 * Valid requests for every route (built from the route pattern and a seed), the mutations the
 * fuzzer applies to them, and the documented error shape each route must answer with.
 *
 * Routes are classified by prefix, so routes added later are covered without editing this file;
 * only a route that needs a particular valid body to get past its first checks has an entry in
 * `BODIES` / `QUERIES`.
 */
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { ADMIN_TOKEN, appBody } from '../../helpers/app.js';
import { PASSWORD } from '../../helpers/accounts.js';
import { SPA_REDIRECT } from '../../helpers/oauth-inject.js';
import { pkcePair } from '../../helpers/oauth-server.js';
import {
  BAD_ENCODINGS, CONTENT_TYPES, ORIGINS, clientAddress, encodeBytes, hostileString, hostileValue, malformedForm, malformedJson,
} from './hostile.js';
import type { RouteSpec, Seed } from './world.js';

/**
 * The documented error shape (DESIGN §4.1): problem+json for admin, self-service and sign-in
 * JSON; RFC 6749 JSON for the OAuth back-channel; an HTML page for what a browser navigates to.
 */
export type Shape = 'problem' | 'oauth' | 'page';

const OAUTH_JSON = [
  '/api/auth/oauth2/token', '/api/auth/oauth2/revoke', '/api/auth/oauth2/userinfo', '/api/auth/oauth2/device_authorization',
  '/api/auth/oauth2/introspect', '/api/auth/jwks', '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server',
];
// Forward auth's start is where a proxy sends the browser to sign in: a page, like authorize.
const BROWSER_API = ['/api/auth/oauth2/authorize', '/api/auth/oauth2/end-session', '/api/auth/callback/', '/api/auth/sign-in/:', '/api/auth/forward/start'];

export function shapeOf(url: string): Shape {
  if (OAUTH_JSON.includes(url)) return 'oauth';
  if (BROWSER_API.some((prefix) => url.startsWith(prefix))) return 'page';
  // Files: the branding logo and stylesheet (an <img> or <link> asks, not a person) answer problem+json too;
  // so does /metrics, which a Prometheus server asks.
  // The trust page and its files answer problem+json too (devices and scripts fetch them, as /ca.pem).
  // WebFinger (RFC 7033) is asked by programs (Tailscale), so its errors are problem+json.
  if (url.startsWith('/api/') || url === '/.well-known/webfinger' || url === '/healthz' || url === '/ca.pem' || url === '/trust' || url.startsWith('/trust.') || url.startsWith('/trust/') || url === '/metrics' || url.startsWith('/branding/')) return 'problem';
  return 'page';
}

/** Routes the fuzzer leaves alone: the panel's static build and the page stylesheet (files, no input). */
export function fuzzable(route: RouteSpec): boolean {
  if (route.method === 'HEAD') return false; // Fastify's automatic twins of GET routes
  return !(route.url === '/admin' || route.url.startsWith('/admin/') || route.url.startsWith('/assets/'));
}

type Body = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'form'; value: Record<string, string> };

export interface BaseRequest {
  route: RouteSpec;
  shape: Shape;
  /** Path parameter values, in pattern order. */
  params: [name: string, value: string][];
  query: [string, string][];
  headers: Record<string, string>;
  body: Body;
}

/** A CSRF token the fuzzer sets both as the form cookie and the hidden field (double submit). */
const CSRF = 'fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz';

/** A well-formed one-time token that was never issued (links arrive by e-mail, which the fuzzer does not read). */
const UNKNOWN_TOKEN = 'A'.repeat(43);

const json = (value: unknown): Body => ({ kind: 'json', value });
const form = (value: Record<string, string>): Body => ({ kind: 'form', value: { csrf_token: CSRF, ...value } });
const oauthForm = (value: Record<string, string>): Body => ({ kind: 'form', value });

const authorizeQuery = (s: Seed): [string, string][] => Object.entries({
  response_type: 'code', client_id: s.spaId, redirect_uri: SPA_REDIRECT, scope: 'openid profile offline_access', state: 'st',
  nonce: 'nn', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
});
const returnTo = (s: Seed) => `/api/auth/oauth2/authorize?${new URLSearchParams(authorizeQuery(s))}`;

/** Valid bodies for routes that need more than `{}` (keyed `METHOD pattern`). */
const BODIES: Record<string, (s: Seed) => Body> = {
  'POST /api/admin/applications': (s) => json(appBody({ id: `fuzz-new-${s.n}`, audience: `https://new-${s.n}.example.com/api` })),
  'PATCH /api/admin/applications/:id': () => json({ name: 'Renamed', redirectUris: [SPA_REDIRECT] }),
  'PATCH /api/admin/applications/:id/auth-policy': () => json({
    signup_policy: 'open', allowed_providers: ['email'],
    profile_fields: [{ key: 'team', label: 'Team', type: 'select', options: ['a', 'b'], required: false, user_editable: true }],
  }),
  'POST /api/admin/applications/:id/api-keys': () => json({ name: 'key', scopes: ['users:read'] }),
  'PATCH /api/admin/applications/:id/users/:uid': () => json({ role: 'admin', status: 'active', profile: {} }),
  'POST /api/admin/applications/:id/invitations': (s) => json({ emails: [`new-${s.n}@example.com`], role: 'member', message: 'Welcome' }),
  'POST /api/admin/sso-groups': (s) => json({ id: `fuzz-group-new-${s.n}`, name: 'Team' }),
  'PATCH /api/admin/sso-groups/:id': () => json({ name: 'Renamed' }),
  'POST /api/admin/sso-groups/:id/apps': (s) => json({ appId: s.spaId }),
  'POST /api/admin/groups': (s) => json({ id: `fuzz-team-new-${s.n}`, name: 'Team', description: 'A team' }),
  'PATCH /api/admin/groups/:id': () => json({ name: 'Renamed', description: null }),
  // A file that names one group (a dry run, QUERIES: the world stays as it is); mutations reach the parser.
  'POST /api/admin/config/apply': (s) => json({ document: `version: 1\ngroups:\n  fuzz-config-${s.n}:\n    name: Team\n`, secrets: { '${X}': 'value' } }),
  'PATCH /api/admin/people/:id': () => json({ givenName: 'Given', familyName: 'Family', emailVerified: true }),
  'PATCH /api/me': () => json({ name: 'Name', givenName: 'Given', familyName: 'Family' }),
  'POST /account/names': () => form({ name: 'Name', given_name: 'Given', family_name: 'Family' }),
  'POST /api/auth/sign-up/email': (s) => json({ email: `joiner-${s.n}@example.com`, password: PASSWORD, name: 'Joiner', applicationId: s.spaId }),
  'POST /api/auth/sign-in/email': (s) => json({ email: s.email, password: PASSWORD, applicationId: s.spaId }),
  'POST /api/auth/invitations/accept': (s) => json({ token: s.invitationToken }),
  'PATCH /api/me/applications/:id/profile': () => json({ profile: {} }),
  'POST /api/me/password': () => json({ currentPassword: PASSWORD, newPassword: `${PASSWORD} and more` }),
  'POST /api/auth/password-reset': (s) => json({ email: s.email }),
  'POST /api/auth/password-reset/confirm': () => json({ token: UNKNOWN_TOKEN, password: PASSWORD }),
  'POST /api/auth/verify-email': () => json({ token: UNKNOWN_TOKEN }),
  'POST /forgot-password': (s) => form({ email: s.email }),
  'POST /reset-password': () => form({ token: UNKNOWN_TOKEN, password: PASSWORD, confirm_password: PASSWORD }),
  'POST /verify-email': () => form({ token: UNKNOWN_TOKEN }),
  'POST /api/auth/oauth2/token': (s) => oauthForm({ grant_type: 'refresh_token', refresh_token: s.refreshToken, client_id: s.spaId }),
  'POST /api/auth/oauth2/revoke': (s) => oauthForm({ token: s.refreshToken, client_id: s.spaId }),
  'POST /api/auth/oauth2/userinfo': () => ({ kind: 'none' }),
  'POST /api/auth/oauth2/device_authorization': (s) => oauthForm({ client_id: s.spaId, scope: 'openid offline_access' }),
  'POST /api/auth/oauth2/introspect': (s) => oauthForm({ token: s.accessToken, client_id: s.webId, client_secret: s.webSecret }),
  'POST /device': () => form({ user_code: 'BCDF-GHJK', action: 'approve' }),
  'POST /api/auth/oauth2/authorize': (s) => oauthForm(Object.fromEntries(authorizeQuery(s))),
  'POST /api/auth/oauth2/end-session': (s) => oauthForm({ client_id: s.spaId, post_logout_redirect_uri: SPA_REDIRECT, state: 'st' }),
  'POST /sign-in': (s) => form({ email: s.email, password: PASSWORD, client_id: s.spaId, return_to: returnTo(s) }),
  'POST /sign-up': (s) => form({ email: `page-${s.n}@example.com`, password: PASSWORD, name: 'Page', client_id: s.spaId }),
  'POST /invite/:token/sign-up': () => form({ name: 'Invitee', password: PASSWORD }),
  'POST /invite/:token/sign-in': (s) => form({ email: s.email, password: PASSWORD }),
};

/** Valid query strings (keyed `METHOD pattern`). */
const QUERIES: Record<string, (s: Seed) => [string, string][]> = {
  'POST /api/admin/config/apply': () => [['dryRun', '1']],
  'GET /api/admin/applications': () => [['limit', '10']],
  'GET /api/admin/applications/:id/users': () => [['q', 'person'], ['status', 'active'], ['role', 'member'], ['limit', '5']],
  'GET /api/admin/applications/:id/invitations': () => [['status', 'pending']],
  'GET /api/admin/applications/:id/webhook-deliveries': () => [['status', 'pending']],
  'GET /api/admin/audit-log': (s) => [['applicationId', s.spaId], ['limit', '5']],
  'GET /api/auth/oauth2/authorize': authorizeQuery,
  'GET /api/auth/oauth2/end-session': (s) => [['client_id', s.spaId], ['post_logout_redirect_uri', SPA_REDIRECT], ['state', 'st'], ['id_token_hint', s.idToken]],
  'GET /sign-in': (s) => [['client_id', s.spaId], ['return_to', returnTo(s)]],
  'GET /sign-up': (s) => [['client_id', s.spaId], ['return_to', returnTo(s)]],
  'GET /reset-password': () => [['token', UNKNOWN_TOKEN]],
  'GET /verify-email': () => [['token', UNKNOWN_TOKEN]],
  'GET /api/auth/sign-in/:provider': (s) => [['client_id', s.spaId], ['return_to', returnTo(s)]],
  'GET /device': () => [['user_code', 'BCDF-GHJK']],
  'GET /api/admin/applications/:id/backchannel-logouts': () => [['status', 'pending'], ['limit', '5']],
  'GET /api/admin/applications/:id/forward-auth/snippet': () => [['proxy', 'nginx'], ['upstream', 'http://127.0.0.1:8080'], ['scheme', 'http']],
  'GET /api/admin/groups': () => [['q', 'fuzz'], ['limit', '5']],
  'GET /api/admin/groups/:id/members': () => [['limit', '5']],
};

/** A real id for each path parameter, chosen by its name and the segment before it. */
function paramValue(pattern: string, name: string, s: Seed): string {
  const before = pattern.slice(0, pattern.indexOf(`:${name}`)).split('/').filter(Boolean).pop();
  switch (name) {
    case 'kid': return s.apiKeyId;
    case 'uid': return s.membershipId;
    case 'iid': return s.invitationId;
    case 'did': return s.deliveryId;
    case 'appId': return s.webId;
    case 'token': return s.invitationToken;
    case 'sid': return s.sessionId ?? 'ses_unknown';
    case 'provider': return 'github';
    case 'personId': return s.userId;
  }
  if (before === 'groups') return s.groupId;
  if (before === 'people') return s.userId;
  if (before === 'sso-groups') return s.ssoGroupId;
  if (before === 'backups') return 'gatehouse-20260101T000000Z-abcdef';
  // Webhook deliveries, the client secret and the protected host live on the web application.
  if (before === 'applications' && /client-secret|webhook|forward-auth/.test(pattern)) return s.webId;
  return s.spaId;
}

export function baseRequest(route: RouteSpec, s: Seed): BaseRequest {
  const key = `${route.method} ${route.url}`;
  const shape = shapeOf(route.url);
  const params = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m): [string, string] => [m[1]!, paramValue(route.url, m[1]!, s)]);
  const writes = !['GET', 'HEAD', 'OPTIONS', 'DELETE'].includes(route.method);
  const headers: Record<string, string> = {};
  if (route.url.startsWith('/api/admin/')) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  else if (route.url.startsWith('/api/auth/oauth2/userinfo')) headers.authorization = `Bearer ${s.accessToken}`;
  else headers.cookie = `${s.sessionCookie}; gatehouse_csrf=${CSRF}`;
  const body = BODIES[key]?.(s) ?? (!writes ? { kind: 'none' } : shape === 'page' ? form({}) : json({}));
  return { route, shape, params, query: QUERIES[key]?.(s) ?? [], headers, body };
}

// ---------------------------------------------------------------------------------------------
// Mutations

type BodyMutation =
  | { kind: 'keep' }
  | { kind: 'field'; index: number; value: unknown }
  | { kind: 'extra'; key: string; value: unknown }
  | { kind: 'replace'; value: unknown }
  | { kind: 'raw'; payload: string | Buffer }
  | { kind: 'duplicate'; index: number; value: string }
  | { kind: 'empty' };

const bodyMutation: fc.Arbitrary<BodyMutation> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'keep' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('field' as const), index: fc.nat(), value: hostileValue }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('extra' as const), key: hostileString, value: hostileValue }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace' as const), value: hostileValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw' as const), payload: fc.oneof(malformedJson, malformedForm) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), index: fc.nat(), value: hostileString }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
);

type QueryMutation =
  | { kind: 'keep' }
  | { kind: 'duplicate'; index: number; value: string }
  | { kind: 'value'; index: number; value: string }
  | { kind: 'extra'; key: string; value: string }
  | { kind: 'raw'; text: string };

const queryMutation: fc.Arbitrary<QueryMutation> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'keep' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), index: fc.nat(), value: hostileString }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('value' as const), index: fc.nat(), value: hostileString }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('extra' as const), key: fc.oneof(hostileString, fc.constantFrom('__proto__', 'constructor[prototype]', 'a[b]', 'limit[]')), value: hostileString }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('raw' as const), text: fc.constantFrom(...BAD_ENCODINGS).map((bad) => `x=${bad}&${bad}=1`) }) },
);

type PathMutation = { kind: 'keep' } | { kind: 'value'; index: number; value: string } | { kind: 'raw'; index: number; text: string };

const pathMutation: fc.Arbitrary<PathMutation> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'keep' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('value' as const), index: fc.nat(), value: hostileString.filter((v) => v.length > 0) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('raw' as const), index: fc.nat(), text: fc.constantFrom(...BAD_ENCODINGS) }) },
);

/**
 * A header change: set (replace; `null` removes) or repeat (a second header line, folded the way
 * Node's HTTP parser folds duplicates, since `inject` cannot send two lines).
 */
type HeaderMutation = { name: string; value: string | null; repeat: boolean };

const authorizationValues = (s: Seed) => fc.oneof(
  fc.constantFrom(null, 'Bearer', 'Bearer ', 'Basic', 'Basic !!!', 'Negotiate abc', `bearer ${ADMIN_TOKEN}`, `Bearer  ${ADMIN_TOKEN}`,
    `Bearer ${ADMIN_TOKEN} extra`, `Bearer ${ADMIN_TOKEN}\u0000`, `Bearer ${s.apiKey}`, `Bearer ${s.accessToken}`, `Bearer ${s.refreshToken}`,
    `Basic ${Buffer.from(`${s.webId}:${s.webSecret}`).toString('base64')}`, `Basic ${Buffer.from(':').toString('base64')}`,
    `Basic ${Buffer.from('\u0000:\u0000').toString('base64')}`, `Bearer ${'a'.repeat(16_000)}`, `Bearer ${s.accessToken.slice(0, -2)}`,
    'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'),
  hostileString.map((v) => `Bearer ${v}`),
  hostileString.map((v) => `Basic ${Buffer.from(v).toString('base64')}`),
);

const cookieValues = (s: Seed) => fc.oneof(
  fc.constantFrom(null, 'gatehouse_session=', 'gatehouse_session=%zz', `gatehouse_session=${'a'.repeat(8_000)}`,
    `${s.sessionCookie}; gatehouse_session=evil`, `gatehouse_session=evil; ${s.sessionCookie}`, '=;=;;', ';;;;',
    Array.from({ length: 300 }, (_, i) => `c${i}=${i}`).join('; '), `${s.sessionCookie}; gatehouse_csrf=${'b'.repeat(43)}`,
    `gatehouse_csrf=${CSRF}`, `${s.sessionCookie}; gatehouse_csrf=`),
  hostileString.map((v) => `gatehouse_session=${v}; gatehouse_csrf=${v}`),
);

const headerMutation = (s: Seed): fc.Arbitrary<HeaderMutation> => fc.oneof(
  fc.record({ name: fc.constant('content-type'), value: fc.oneof(fc.constant(null), fc.constantFrom(...CONTENT_TYPES), hostileString), repeat: fc.boolean() }),
  fc.record({ name: fc.constant('authorization'), value: authorizationValues(s), repeat: fc.boolean() }),
  fc.record({ name: fc.constant('cookie'), value: cookieValues(s), repeat: fc.boolean() }),
  fc.record({ name: fc.constant('origin'), value: fc.oneof(fc.constantFrom(...ORIGINS), hostileString), repeat: fc.boolean() }),
  fc.record({
    name: fc.constantFrom('accept', 'accept-language', 'user-agent', 'x-forwarded-for', 'x-forwarded-proto', 'referer', 'if-none-match', 'range', 'host'),
    value: hostileString,
    repeat: fc.boolean(),
  }),
);

export interface Mutation {
  path: PathMutation;
  query: QueryMutation;
  body: BodyMutation;
  headers: HeaderMutation[];
  remoteAddress: string;
}

export const mutation = (s: Seed): fc.Arbitrary<Mutation> =>
  fc.record({
    path: pathMutation,
    query: queryMutation,
    body: bodyMutation,
    headers: fc.array(headerMutation(s), { maxLength: 3 }),
    remoteAddress: clientAddress,
  });

const pick = <T>(items: T[], index: number): T | undefined => (items.length ? items[index % items.length] : undefined);

/** JSON text as a client would send it (lone surrogates escaped, as JSON.stringify does). */
const jsonText = (value: unknown) => JSON.stringify(value) ?? 'null';

function applyBody(body: Body, m: BodyMutation): { payload?: string | Buffer; type?: string } {
  if (body.kind === 'none' && m.kind === 'keep') return {};
  const type = body.kind === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
  if (m.kind === 'raw') return { payload: m.payload, type };
  if (m.kind === 'empty') return { payload: '', type };
  if (body.kind === 'form') {
    const entries = Object.entries(body.value).map(([k, v]): [string, string] => [k, v]);
    const text = (value: unknown) => (typeof value === 'string' ? value : jsonText(value));
    if (m.kind === 'field') {
      const field = pick(entries, m.index);
      if (field) field[1] = text(m.value);
    }
    if (m.kind === 'extra') entries.push([m.key, text(m.value)]);
    if (m.kind === 'duplicate') entries.push([pick(entries, m.index)?.[0] ?? 'x', m.value]);
    const encoded = entries.map(([k, v]) => `${encodeBytes(k)}=${encodeBytes(v)}`).join('&');
    return { payload: m.kind === 'replace' ? jsonText(m.value) : encoded, type };
  }
  const value = body.kind === 'json' ? body.value : {};
  if (m.kind === 'replace') return { payload: jsonText(m.value), type };
  if (m.kind === 'keep' || typeof value !== 'object' || value === null || Array.isArray(value)) return { payload: jsonText(value), type };
  const object = { ...(value as Record<string, unknown>) };
  const keys = Object.keys(object);
  if (m.kind === 'field') object[pick(keys, m.index) ?? 'x'] = m.value;
  if (m.kind === 'extra') object[m.key] = m.value;
  if (m.kind === 'duplicate') {
    // JSON with a repeated key: `{"a":1,…,"a":"…"}`.
    const k = pick(keys, m.index) ?? 'x';
    const text = jsonText(object);
    return { payload: `${text.slice(0, -1)}${keys.length ? ',' : ''}${jsonText(k)}:${jsonText(m.value)}}`, type };
  }
  return { payload: jsonText(object), type };
}

function applyPath(base: BaseRequest, m: PathMutation): string {
  const values = base.params.map(([, v]) => encodeBytes(v));
  if (m.kind === 'value' && values.length) values[m.index % values.length] = encodeBytes(m.value);
  if (m.kind === 'raw' && values.length) values[m.index % values.length] = m.text;
  let i = 0;
  return base.route.url.replace(/:[A-Za-z0-9_]+/g, () => values[i++]!);
}

function applyQuery(base: BaseRequest, m: QueryMutation): string {
  const pairs = base.query.map(([k, v]): [string, string] => [k, v]);
  if (m.kind === 'duplicate') pairs.push([pick(pairs, m.index)?.[0] ?? 'limit', m.value]);
  if (m.kind === 'value') {
    const pair = pick(pairs, m.index);
    if (pair) pair[1] = m.value;
    else pairs.push(['q', m.value]);
  }
  if (m.kind === 'extra') pairs.push([m.key, m.value]);
  const parts = pairs.map(([k, v]) => `${encodeBytes(k)}=${encodeBytes(v)}`);
  if (m.kind === 'raw') parts.push(m.text);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** Headers whose repeats Node drops (the first line wins); cookies join with `; `, others with `, `. */
const FIRST_WINS = new Set(['authorization', 'content-type', 'user-agent', 'referer', 'host']);
function applyHeader(headers: Record<string, string>, { name, value, repeat }: HeaderMutation): void {
  const existing = headers[name];
  if (value === null) delete headers[name];
  else if (!repeat || existing === undefined) headers[name] = value;
  else if (!FIRST_WINS.has(name)) headers[name] = `${existing}${name === 'cookie' ? '; ' : ', '}${value}`;
}

export function mutate(base: BaseRequest, m: Mutation): InjectOptions {
  const body = applyBody(base.body, m.body);
  const headers = { ...base.headers };
  if (body.type) headers['content-type'] = body.type;
  for (const h of m.headers) applyHeader(headers, h);
  return {
    method: base.route.method as InjectOptions['method'],
    url: applyPath(base, m.path) + applyQuery(base, m.query),
    headers,
    remoteAddress: m.remoteAddress,
    ...(body.payload === undefined ? {} : { payload: body.payload }),
  };
}
