/**
 * The generic `oidc` provider (DESIGN §4.9): any OpenID Provider at `OIDC_ISSUER`, through
 * openid-client. Discovery (OIDC Discovery 1.0) finds the endpoints and keys; the code exchange
 * checks `state`, the RFC 9207 `iss` parameter, PKCE and the ID token (signature, `iss`, `aud`,
 * `exp`, `nonce`). The issuer must be `https:`, except for loopback and private-network hosts
 * (the rule redirect URIs follow, server/applications/redirect-uris.ts).
 */
import * as client from 'openid-client';
import type { ExternalIdentity } from '../../db/schema.js';
import { isPrivateHost } from '../../applications/redirect-uris.js';
import type { LoginSecrets, ProviderClient } from './provider-client.js';
import { ProviderSettingError } from './errors.js';

const SCOPE = 'openid email profile';
/** Discovery is cached for this long (per issuer and client), so every sign-in is not two round trips. */
const DISCOVERY_TTL_MS = 60 * 60_000;

const discovered = new Map<string, { config: Promise<client.Configuration>; at: number }>();

/** The issuer URL, refused unless https or a private-network http host. */
export function oidcIssuerUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ProviderSettingError('OIDC_ISSUER must be an absolute URL');
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isPrivateHost(url.hostname)) return url;
  throw new ProviderSettingError('OIDC_ISSUER must use https (http only for loopback or private-network hosts)');
}

function configuration(env: Record<string, string | undefined>): Promise<client.Configuration> {
  const issuer = oidcIssuerUrl(env.OIDC_ISSUER!);
  const key = `${issuer.href} ${env.OIDC_CLIENT_ID} ${env.OIDC_CLIENT_SECRET}`;
  const cached = discovered.get(key);
  if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.config;
  const config = client.discovery(issuer, env.OIDC_CLIENT_ID!, env.OIDC_CLIENT_SECRET!, undefined, {
    timeout: 10,
    execute: issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [],
  });
  discovered.set(key, { config, at: Date.now() });
  // A failed discovery is not remembered: the next sign-in tries again.
  config.catch(() => discovered.delete(key));
  return config;
}

export function oidcClient(env: Record<string, string | undefined>, redirectUri: string): ProviderClient {
  return {
    async authorizationUrl(s: LoginSecrets) {
      const config = await configuration(env);
      return client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: SCOPE,
        state: s.state,
        nonce: s.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(s.codeVerifier),
        code_challenge_method: 'S256',
      });
    },
    async identity(callbackUrl: URL, s: LoginSecrets): Promise<ExternalIdentity> {
      const config = await configuration(env);
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: s.codeVerifier,
        expectedState: s.state,
        expectedNonce: s.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      const email = typeof claims.email === 'string' && claims.email ? claims.email.toLowerCase() : null;
      return {
        providerAccountId: claims.sub,
        email,
        emailVerified: email !== null && claims.email_verified === true,
        name: typeof claims.name === 'string' && claims.name ? claims.name : null,
      };
    },
  };
}
