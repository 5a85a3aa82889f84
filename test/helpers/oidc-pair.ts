/**
 * Two real Gatehouse instances for the generic `oidc` provider: the upstream (a listening server,
 * `startOAuthServer`, on 127.0.0.1) is the OpenID Provider; each downstream is `buildApp` with a
 * fixed clock listening on 127.0.0.2 (another host, so the two servers' cookies stay apart in a
 * browser), with an application `notes` that allows `email` and `oidc`.
 */
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { Config } from '../../server/config.js';
import { appBody, makeApp, type TestApp } from './app.js';
import { createClient, type OAuthServer } from './oauth-server.js';

export interface Downstream {
  t: TestApp;
  issuer: string;
  /** `host:port`, as `URL.host` spells it. */
  host: string;
  /** The upstream application the downstream signs in through. */
  upstreamAppId: string;
}

/** A listening downstream whose `oidc` provider (named "Upstream") is `upstream`; `config` adds settings (e.g. `smtpUrl`). */
export async function downstream(
  upstream: OAuthServer,
  appCallback: string,
  policy: Record<string, unknown> = { signup_policy: 'open' },
  config: Partial<Config> = {},
): Promise<Downstream> {
  const env: Record<string, string> = { OIDC_ISSUER: upstream.url, OIDC_NAME: 'Upstream' };
  const t = await makeApp({ config: { ...config, env } });
  await t.app.listen({ host: '127.0.0.2', port: 0 });
  const { port } = t.app.server.address() as AddressInfo;
  t.config.issuer = `http://127.0.0.2:${port}`; // what main.ts does once the port is known
  const upstreamAppId = `down-${port}`;
  const client = await createClient(upstream, {
    id: upstreamAppId, name: 'Downstream', audience: `https://down-${port}.example.com`, clientType: 'web',
    redirectUris: [`${t.config.issuer}/api/auth/callback/oidc`],
  });
  env.OIDC_CLIENT_ID = upstreamAppId;
  env.OIDC_CLIENT_SECRET = client.clientSecret!;
  const res = await t.admin('POST', '/api/admin/applications', appBody({
    redirectUris: [appCallback], authPolicy: { allowed_providers: ['email', 'oidc'], ...policy },
  }));
  expect(res.statusCode).toBe(201);
  return { t, issuer: t.config.issuer, host: `127.0.0.2:${port}`, upstreamAppId };
}

/**
 * A person of the upstream with a verified e-mail (they joined the downstream's upstream
 * application by invitation); returns their upstream session cookie value.
 */
export async function upstreamPerson(upstream: OAuthServer, d: Downstream, email: string): Promise<string> {
  const invited = await upstream.admin('POST', `/api/admin/applications/${d.upstreamAppId}/invitations`, { emails: [email] });
  expect(invited.status).toBe(201);
  const token = ((await invited.json()) as { invitations: { acceptUrl: string }[] }).invitations[0]!.acceptUrl.split('/').pop()!;
  const res = await fetch(`${upstream.url}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'upstream password 1', name: 'Ada Upstream', invitationToken: token }),
  });
  expect(res.status).toBe(201);
  // A link not e-mailed proves nothing about the mailbox (invitations/accept.ts): the upstream's
  // administrator vouches for the address instead.
  const { user } = (await res.json()) as { user: { id: string } };
  expect((await upstream.admin('PATCH', `/api/admin/people/${user.id}`, { emailVerified: true })).status).toBe(200);
  return res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!.split(';')[0]!.slice('gatehouse_session='.length);
}
