/**
 * Back-channel logout over real HTTP (OpenID Connect Back-Channel Logout 1.0, spec
 * grants-and-logout.md): openid-client signs in as the relying party, a real node:http receiver
 * gets the logout token, and jose verifies it the way an application would (signature from the
 * JWKS, `typ: logout+jwt`, issuer, audience, `events`, `sid` equal to the ID token's, no
 * `nonce`). Also: retries while the receiver is down or failing, the end of the retry schedule,
 * a slow receiver that never delays a sign-out, and a suspended member's `sub`-only token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createClient, follow, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { eventually, startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const REDIRECT = 'http://127.0.0.1:5173/callback';
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

let server: OAuthServer;
let receiver: Receiver;
let appCount = 0;

beforeAll(async () => {
  server = await startOAuthServer({
    GATEHOUSE_WEBHOOK_RETRY_SCHEDULE_MS: '300,300,300',
    GATEHOUSE_WEBHOOK_TIMEOUT_MS: '2000',
    GATEHOUSE_WEBHOOK_POLL_MS: '100',
    // The receivers listen on 127.0.0.1, as a receiver on the appliance itself would.
    GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1',
  });
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await server?.stop();
});

interface Delivery {
  id: string;
  status: string;
  attempts: number;
  reason: string;
  subject: string;
  sessionId: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
}

/** A fresh spa application whose logout URI is `uri` (or `uri(id)`), and a person signed in to it through openid-client. */
async function signedIn(uri: string | ((id: string) => string)) {
  const id = `app${++appCount}`;
  await createClient(server, {
    id, name: `App ${appCount}`, audience: `https://${id}.example.com/api`, clientType: 'spa', redirectUris: [REDIRECT],
    backchannelLogoutUri: typeof uri === 'string' ? uri : uri(id),
  });
  const cookie = await signUpCookie(server, `${id}@example.com`, id);
  const config = await client.discovery(new URL(server.url), id, undefined, client.None(), { execute: [client.allowInsecureRequests] });
  const verifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT, scope: 'openid', code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256', nonce,
  });
  const hop = await follow(url, cookie);
  const tokens = await client.authorizationCodeGrant(config, hop.location!, { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
  const claims = tokens.claims()!;
  return { id, cookie, sub: claims.sub, sid: claims.sid as string, config };
}

const signOut = (cookie: string) =>
  fetch(`${server.url}/api/auth/sign-out`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' } });

async function deliveries(appId: string): Promise<Delivery[]> {
  const res = await server.admin('GET', `/api/admin/applications/${appId}/backchannel-logouts`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { deliveries: Delivery[] }).deliveries;
}

const pathOf = (appId: string) => `/logout/${appId}`;
const atReceiver = (appId: string) => `http://127.0.0.1:${receiver.port}${pathOf(appId)}`;
const requestsTo = (appId: string) => receiver.received.filter((r) => r.path === pathOf(appId));

describe('a sign-out', () => {
  it('POSTs a logout token that jose verifies: typ logout+jwt, signature, issuer, audience, events, sid, sub, no nonce', async () => {
    const rp = await signedIn(atReceiver);
    expect(typeof rp.sid).toBe('string');
    const out = await signOut(rp.cookie);
    expect(out.status).toBe(204);

    const request = await eventually(() => requestsTo(rp.id)[0]);
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(request.body);
    expect([...form.keys()]).toEqual(['logout_token']);
    const logoutToken = form.get('logout_token')!;

    const jwks = createRemoteJWKSet(new URL(rp.config.serverMetadata().jwks_uri!));
    const { payload, protectedHeader } = await jwtVerify(logoutToken, jwks, {
      issuer: server.url, audience: rp.id, typ: 'logout+jwt', algorithms: ['RS256'], maxTokenAge: '2 minutes',
    });
    expect(protectedHeader).toEqual({ alg: 'RS256', typ: 'logout+jwt', kid: decodeProtectedHeader(logoutToken).kid });
    expect(Object.keys(payload).sort()).toEqual(['aud', 'events', 'exp', 'iat', 'iss', 'jti', 'sid', 'sub']);
    expect(payload.events).toEqual({ [EVENT]: {} });
    expect(payload.sid).toBe(rp.sid);
    expect(payload.sub).toBe(rp.sub);
    expect(payload).not.toHaveProperty('nonce');
    expect(payload.exp! - payload.iat!).toBe(120);

    // The delivery log shows it, with the token's jti as its id.
    const [logged] = await eventually(async () => {
      const list = await deliveries(rp.id);
      return list[0]?.status === 'succeeded' ? list : undefined;
    });
    expect(logged).toMatchObject({ id: payload.jti, status: 'succeeded', attempts: 1, reason: 'sign_out', subject: rp.sub, sessionId: rp.sid, lastStatusCode: 204, lastError: null });
  });
});

describe('delivery', () => {
  it('retries while the receiver is down, and delivers once it is back', async () => {
    const down = await startReceiver();
    const port = down.port;
    await down.close(); // nothing listens on the port now
    const rp = await signedIn(`http://127.0.0.1:${port}/logout`);
    expect((await signOut(rp.cookie)).status).toBe(204);
    const failed = await eventually(async () => {
      const [d] = await deliveries(rp.id);
      return d && d.attempts >= 1 ? d : undefined;
    });
    expect(failed).toMatchObject({ status: 'pending', lastStatusCode: null, lastError: 'request failed: ECONNREFUSED' });

    const back = await startReceiver(() => ({ status: 200 }), port);
    try {
      const [request] = await back.waitFor(1);
      const token = new URLSearchParams(request!.body).get('logout_token')!;
      const jwks = createRemoteJWKSet(new URL(rp.config.serverMetadata().jwks_uri!));
      const { payload } = await jwtVerify(token, jwks, { issuer: server.url, audience: rp.id, typ: 'logout+jwt' });
      expect(payload.sid).toBe(rp.sid);
      const done = await eventually(async () => {
        const [d] = await deliveries(rp.id);
        return d?.status === 'succeeded' ? d : undefined;
      });
      expect(done.attempts).toBeGreaterThanOrEqual(2);
      expect(done.lastStatusCode).toBe(200);
    } finally {
      await back.close();
    }
  });

  it('retries a failing answer with the same jti, and gives up after the schedule', async () => {
    const failing = await startReceiver(() => ({ status: 503 }));
    try {
      const rp = await signedIn(`${failing.url}`);
      expect((await signOut(rp.cookie)).status).toBe(204);
      // The schedule has 3 retries: 4 attempts, then `failed`.
      const gaveUp = await eventually(async () => {
        const [d] = await deliveries(rp.id);
        return d?.status === 'failed' ? d : undefined;
      });
      expect(gaveUp).toMatchObject({ attempts: 4, lastStatusCode: 503, lastError: 'HTTP 503' });
      expect(failing.received).toHaveLength(4);
      const jtis = failing.received.map((r) => {
        const token = new URLSearchParams(r.body).get('logout_token')!;
        return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string };
      });
      expect(new Set(jtis.map((p) => p.jti))).toEqual(new Set([gaveUp.id]));
    } finally {
      await failing.close();
    }
  });

  it('a receiver that never answers does not delay sign-outs', async () => {
    const slow = await startReceiver(() => 'hang');
    try {
      const first = await signedIn(`${slow.url}`);
      const second = await signedIn(`${slow.url}`);
      expect((await signOut(first.cookie)).status).toBe(204);
      // The first logout is now held open by the receiver…
      await slow.waitFor(1);
      const [held] = await deliveries(first.id);
      expect(held).toMatchObject({ status: 'pending', attempts: 0 });
      // …and another person's sign-out still completes at once, while it hangs.
      expect((await signOut(second.cookie)).status).toBe(204);
      await slow.waitFor(2); // both held open now
      const [stillHeld] = await deliveries(first.id);
      expect(stillHeld).toMatchObject({ status: 'pending', attempts: 0 });
      // The per-try timeout ends the hung attempt; it is retried later.
      const timedOut = await eventually(async () => {
        const [d] = await deliveries(first.id);
        return d && d.attempts >= 1 ? d : undefined;
      });
      expect(timedOut.lastError).toBe('timed out after 2000 ms');
    } finally {
      await slow.close();
    }
  });
});

it('a suspended member gets a sub-only logout token (no sid) at the application', async () => {
  const rp = await signedIn(atReceiver);
  const users = (await (await server.admin('GET', `/api/admin/applications/${rp.id}/users`)).json()) as { users: { id: string }[] };
  const res = await server.admin('PATCH', `/api/admin/applications/${rp.id}/users/${users.users[0]!.id}`, { status: 'suspended' });
  expect(res.status).toBe(200);
  const request = await eventually(() => requestsTo(rp.id)[0]);
  const token = new URLSearchParams(request.body).get('logout_token')!;
  const jwks = createRemoteJWKSet(new URL(rp.config.serverMetadata().jwks_uri!));
  const { payload } = await jwtVerify(token, jwks, { issuer: server.url, audience: rp.id, typ: 'logout+jwt' });
  expect(payload).toMatchObject({ sub: rp.sub, events: { [EVENT]: {} } });
  expect(payload).not.toHaveProperty('sid');
  expect(payload).not.toHaveProperty('nonce');
});
