/**
 * The fuzzer's world: one app (in-memory store, fixed clock) whose routes are captured by an
 * `onRoute` listener as they register, and per-route seeds of real data — two applications, a
 * signed-in person with a membership, an invitation, an API key, an SSO group, a webhook
 * delivery, OAuth tokens — so mutated requests reach past authentication into the handlers.
 *
 * Each seed has its own ids (suffix `n`), so a destructive case in one route's run (a DELETE, a
 * sign-out) cannot starve the next route of valid data.
 */
import { expect } from 'vitest';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse, RouteOptions } from 'fastify';
import { buildApp } from '../../../server/app.js';
import { testConfig } from '../../../server/config.js';
import { openDatabase, type Db } from '../../../server/db/client.js';
import { fixedClock } from '../../../server/util/clock.js';
import { ADMIN_TOKEN, appBody } from '../../helpers/app.js';
import { useTestHashCost } from '../../helpers/hash-cost.js';
import { PASSWORD, cookieValue } from '../../helpers/accounts.js';
import { pkcePair } from '../../helpers/oauth-server.js';
import { authorizeUrl, location, SPA_REDIRECT, WEB_REDIRECT } from '../../helpers/oauth-inject.js';

export interface RouteSpec {
  method: string;
  /** The route pattern, e.g. `/api/admin/applications/:id/users/:uid`. */
  url: string;
}

export interface Seed {
  n: number;
  /** An open `spa` application the person belongs to. */
  spaId: string;
  /** A `web` application with a client secret, a webhook URL and a protected host (forward auth). */
  webId: string;
  webSecret: string;
  email: string;
  userId: string;
  membershipId: string;
  /** `gatehouse_session=…` */
  sessionCookie: string;
  /** The session's id, when the self-service API lists sessions. */
  sessionId?: string;
  invitationId: string;
  invitationToken: string;
  apiKeyId: string;
  apiKey: string;
  ssoGroupId: string;
  /** A directory group the person is in. */
  groupId: string;
  deliveryId: string;
  accessToken: string;
  refreshToken: string;
  idToken: string;
}

export interface World {
  app: FastifyInstance;
  db: Db;
  routes: RouteSpec[];
  issuer: string;
  seed(): Promise<Seed>;
  close(): Promise<void>;
}

/** A distinct client address per seed, so the per-IP sign-up limit never blocks seeding. */
const seedAddress = (n: number) => `192.0.2.${n % 250}`;

export async function makeWorld(): Promise<World> {
  // Hashing is not what the fuzzer looks at: a seed per route signs a person up, and sign-up and
  // sign-in cases hash, at the test cost rather than 19 MiB and two passes each (issue 45).
  useTestHashCost();
  const db = openDatabase(':memory:');
  const config = testConfig({ adminToken: ADMIN_TOKEN });
  const routes: RouteSpec[] = [];
  const onRoute = (route: RouteOptions) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  };
  const app = await buildApp({ db, config, clock: fixedClock(new Date()), onRoute });
  await app.ready();
  let count = 0;

  const inject = (options: InjectOptions) => app.inject(options) as Promise<LightMyRequestResponse>;
  const admin = async (method: InjectOptions['method'], url: string, body?: unknown) => {
    const res = await inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(body === undefined ? {} : { payload: body as InjectOptions['payload'] }),
    });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.statusCode === 204 ? undefined : res.json();
  };

  async function seed(): Promise<Seed> {
    const n = ++count;
    const remoteAddress = seedAddress(n);
    const spaId = `fuzz-spa-${n}`;
    const webId = `fuzz-web-${n}`;
    await admin('POST', '/api/admin/applications', appBody({
      id: spaId, audience: `https://${spaId}.example.com/api`, clientType: 'spa', redirectUris: [SPA_REDIRECT],
      authPolicy: { signup_policy: 'open' },
      grantTypes: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      backchannelLogoutUri: `https://${spaId}.example.com/logout`,
    }));
    const web = await admin('POST', '/api/admin/applications', appBody({
      id: webId, audience: `https://${webId}.example.com/api`, clientType: 'web', redirectUris: [WEB_REDIRECT],
      webhookUrl: 'https://hooks.example.com/gatehouse',
      // A protected host, so the proxy configuration route prints one (fuzz-snippets.test.ts goes deeper).
      forwardAuth: { hosts: [`${webId}.lan.example`] },
    }));
    const email = `person-${n}@example.com`;
    const signUp = await inject({
      method: 'POST', url: '/api/auth/sign-up/email', remoteAddress,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email, password: PASSWORD, name: `Person ${n}`, applicationId: spaId }),
    });
    expect(signUp.statusCode, signUp.body).toBe(201);
    const sessionCookie = `gatehouse_session=${cookieValue(signUp, 'gatehouse_session')}`;
    const userId = signUp.json().user.id as string;
    const members = await admin('GET', `/api/admin/applications/${spaId}/users`);
    const invited = await admin('POST', `/api/admin/applications/${spaId}/invitations`, { emails: [`invitee-${n}@example.com`] });
    const invitation = invited.invitations[0];
    const key = await admin('POST', `/api/admin/applications/${spaId}/api-keys`, { name: 'fuzz', scopes: ['users:read', 'users:write'] });
    const group = await admin('POST', '/api/admin/sso-groups', { id: `fuzz-group-${n}`, name: `Group ${n}` });
    await admin('POST', `/api/admin/sso-groups/${group.id}/apps`, { appId: webId });
    const directoryGroup = await admin('POST', '/api/admin/groups', { id: `fuzz-team-${n}`, name: `Team ${n}` });
    await admin('PUT', `/api/admin/groups/${directoryGroup.id}/members/${userId}`);
    const delivery = await admin('POST', `/api/admin/applications/${webId}/webhook-test`);

    const pkce = pkcePair();
    const authorized = await inject({
      method: 'GET',
      headers: { cookie: sessionCookie },
      url: authorizeUrl({
        response_type: 'code', client_id: spaId, redirect_uri: SPA_REDIRECT, scope: 'openid profile email offline_access',
        state: 's', nonce: 'n', code_challenge: pkce.challenge, code_challenge_method: 'S256',
      }),
    });
    const code = location(authorized).searchParams.get('code')!;
    const tokens = await inject({
      method: 'POST', url: '/api/auth/oauth2/token', remoteAddress,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: spaId, code_verifier: pkce.verifier,
      }).toString(),
    });
    expect(tokens.statusCode, tokens.body).toBe(200);
    const { access_token, refresh_token, id_token } = tokens.json();

    // The self-service API may not exist yet (other features land in parallel); use it when it does.
    const sessions = await inject({ method: 'GET', url: '/api/me/sessions', headers: { cookie: sessionCookie } });
    const sessionId = sessions.statusCode === 200 ? (sessions.json().sessions?.[0]?.id as string | undefined) : undefined;

    return {
      n, spaId, sessionId, webId, webSecret: web.clientSecret, email, userId,
      membershipId: members.users[0].id, sessionCookie,
      invitationId: invitation.id, invitationToken: new URL(invitation.acceptUrl).pathname.split('/').pop()!,
      apiKeyId: key.id, apiKey: key.key, ssoGroupId: group.id, groupId: directoryGroup.id, deliveryId: delivery.id,
      accessToken: access_token, refreshToken: refresh_token, idToken: id_token,
    };
  }

  return {
    app,
    db,
    routes,
    issuer: config.issuer,
    seed,
    async close() {
      await app.close();
      db.$client.close();
    },
  };
}
