/**
 * The provider-specific halves of ./clients.ts: one factory per provider, built on arctic (and
 * openid-client through ./oidc.ts). Kept apart so that those libraries (about 100 ES modules with
 * @oslojs and oauth4webapi) load on the first external sign-in, not at every start-up
 * (docs/decisions/0070-lazy-loading.md).
 *
 * ID tokens of the arctic providers arrive straight from their token endpoint over TLS, so their
 * claims are read without a signature check (OIDC Core §3.1.3.7) but the nonce is still compared.
 */
import { decodeIdToken, Discord, Google, MicrosoftEntraId, OAuth2Client, CodeChallengeMethod, OAuth2RequestError, type OAuth2Tokens } from 'arctic';
import type { ExternalIdentity } from '../../db/schema.js';
import type { ProviderClient } from './provider-client.js';
import { oidcClient } from './oidc.js';

const str = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

/** Claims of a provider's ID token, after checking it answers this login's nonce. */
function idTokenClaims(tokens: OAuth2Tokens, nonce: string): Record<string, unknown> {
  const claims = decodeIdToken(tokens.idToken()) as Record<string, unknown>;
  if (claims.nonce !== nonce) throw new Error('the ID token does not carry this sign-in\'s nonce');
  return claims;
}

function identityFromClaims(claims: Record<string, unknown>): ExternalIdentity {
  const sub = str(claims.sub);
  if (!sub) throw new Error('the ID token has no subject');
  return {
    providerAccountId: sub,
    email: str(claims.email)?.toLowerCase() ?? null,
    emailVerified: claims.email_verified === true,
    name: str(claims.name),
  };
}

async function getJson(url: string, accessToken: string): Promise<unknown> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'Gatehouse' },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`${new URL(url).host} answered ${res.status}`);
  return res.json();
}

/** Adds the OIDC nonce to an arctic authorization URL. */
function withNonce(url: URL, nonce: string): URL {
  url.searchParams.set('nonce', nonce);
  return url;
}

function code(callbackUrl: URL): string {
  const value = callbackUrl.searchParams.get('code');
  if (!value) throw new Error('the callback carries no authorization code');
  return value;
}

type Env = Record<string, string | undefined>;
type Factory = (env: Env, redirectUri: string) => ProviderClient;

const OIDC_SCOPES = ['openid', 'email', 'profile'];

export const FACTORIES: Record<string, Factory> = {
  google: (env, redirectUri) => {
    const google = new Google(env.GOOGLE_CLIENT_ID!, env.GOOGLE_CLIENT_SECRET!, redirectUri);
    return {
      authorizationUrl: async (s) => withNonce(google.createAuthorizationURL(s.state, s.codeVerifier, OIDC_SCOPES), s.nonce),
      identity: async (url, s) =>
        identityFromClaims(idTokenClaims(await google.validateAuthorizationCode(code(url), s.codeVerifier), s.nonce)),
    };
  },

  microsoft: (env, redirectUri) => {
    // `common` admits work, school and personal accounts; MICROSOFT_TENANT narrows it.
    const entra = new MicrosoftEntraId(env.MICROSOFT_TENANT || 'common', env.MICROSOFT_CLIENT_ID!, env.MICROSOFT_CLIENT_SECRET!, redirectUri);
    return {
      authorizationUrl: async (s) => withNonce(entra.createAuthorizationURL(s.state, s.codeVerifier, OIDC_SCOPES), s.nonce),
      identity: async (url, s) => {
        const claims = idTokenClaims(await entra.validateAuthorizationCode(code(url), s.codeVerifier), s.nonce);
        // Entra ID does not vouch for the `email` claim, so it never counts as verified.
        return { ...identityFromClaims(claims), emailVerified: false };
      },
    };
  },

  gitlab: (env, redirectUri) => {
    // arctic's GitLab class has no PKCE; its generic client does, against the same endpoints.
    const base = (env.GITLAB_URL || 'https://gitlab.com').replace(/\/+$/, '');
    const client = new OAuth2Client(env.GITLAB_CLIENT_ID!, env.GITLAB_CLIENT_SECRET!, redirectUri);
    return {
      authorizationUrl: async (s) =>
        withNonce(
          client.createAuthorizationURLWithPKCE(`${base}/oauth/authorize`, s.state, CodeChallengeMethod.S256, s.codeVerifier, OIDC_SCOPES),
          s.nonce,
        ),
      identity: async (url, s) =>
        identityFromClaims(idTokenClaims(await client.validateAuthorizationCode(`${base}/oauth/token`, code(url), s.codeVerifier), s.nonce)),
    };
  },

  github: (env, redirectUri) => {
    // Same reason as GitLab: arctic's GitHub class predates GitHub's PKCE support.
    const client = new OAuth2Client(env.GITHUB_CLIENT_ID!, env.GITHUB_CLIENT_SECRET!, redirectUri);
    return {
      authorizationUrl: async (s) =>
        client.createAuthorizationURLWithPKCE(
          'https://github.com/login/oauth/authorize', s.state, CodeChallengeMethod.S256, s.codeVerifier, ['read:user', 'user:email'],
        ),
      identity: async (url, s) => {
        const tokens = await client.validateAuthorizationCode('https://github.com/login/oauth/access_token', code(url), s.codeVerifier);
        const user = (await getJson('https://api.github.com/user', tokens.accessToken())) as Record<string, unknown>;
        const emails = (await getJson('https://api.github.com/user/emails', tokens.accessToken())) as
          { email: string; primary: boolean; verified: boolean }[];
        const primary = emails.find((e) => e.primary) ?? emails.find((e) => e.verified);
        if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new Error('GitHub sent no user id');
        return {
          providerAccountId: String(user.id),
          email: primary?.email.toLowerCase() ?? null,
          emailVerified: primary?.verified === true,
          name: str(user.name) ?? str(user.login),
        };
      },
    };
  },

  discord: (env, redirectUri) => {
    const discord = new Discord(env.DISCORD_CLIENT_ID!, env.DISCORD_CLIENT_SECRET!, redirectUri);
    return {
      authorizationUrl: async (s) => discord.createAuthorizationURL(s.state, s.codeVerifier, ['identify', 'email']),
      identity: async (url, s) => {
        const tokens = await discord.validateAuthorizationCode(code(url), s.codeVerifier);
        const user = (await getJson('https://discord.com/api/users/@me', tokens.accessToken())) as Record<string, unknown>;
        const id = str(user.id);
        if (!id) throw new Error('Discord sent no user id');
        return {
          providerAccountId: id,
          email: str(user.email)?.toLowerCase() ?? null,
          emailVerified: user.verified === true,
          name: str(user.global_name) ?? str(user.username),
        };
      },
    };
  },

  oidc: (env, redirectUri) => oidcClient(env, redirectUri),
};

/** A provider failure for the log line: arctic's OAuth error code and description, else the message. */
export function describeFailure(cause: unknown): string {
  return cause instanceof OAuth2RequestError ? `${cause.code}: ${cause.description ?? ''}` : String((cause as Error)?.message ?? cause);
}
