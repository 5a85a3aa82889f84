/**
 * OAuth clients for the external sign-in providers of DESIGN §4.9. Each one builds the
 * authorization URL (RFC 6749 §4.1.1 with PKCE S256, RFC 7636, and an OIDC `nonce` where the
 * provider issues ID tokens) and, at the callback, exchanges the code and reads who signed in.
 *
 * `google`, `microsoft`, `gitlab`, `github` and `discord` go through arctic; the generic `oidc`
 * provider goes through openid-client (./oidc.ts), which also validates its ID token. ID tokens
 * of the arctic providers arrive straight from their token endpoint over TLS, so their claims are
 * read without a signature check (OIDC Core §3.1.3.7) but the nonce is still compared.
 */
import { decodeIdToken, Discord, Google, MicrosoftEntraId, OAuth2Client, CodeChallengeMethod, type OAuth2Tokens } from 'arctic';
import type { Config } from '../../config.js';
import type { ExternalIdentity } from '../../db/schema.js';
import { providerFailed } from './errors.js';
import { oidcClient } from './oidc.js';

/** The secrets of one in-flight login, created at the start and checked at the callback. */
export interface LoginSecrets {
  state: string;
  codeVerifier: string;
  nonce: string;
}

export interface ProviderClient {
  authorizationUrl(secrets: LoginSecrets): Promise<URL>;
  /** Exchanges the code from `callbackUrl` and reads the person's identity; throws `providerFailed`. */
  identity(callbackUrl: URL, secrets: LoginSecrets): Promise<ExternalIdentity>;
}

/** The callback each provider is registered with (DESIGN §4.9). */
export function callbackUri(config: Config, providerId: string): string {
  return `${config.issuer}/api/auth/callback/${providerId}`;
}

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

const FACTORIES: Record<string, Factory> = {
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

/**
 * The client for a configured external provider. Library and network errors surface as
 * `providerFailed` problems (an error page naming the provider), never as a 500.
 */
export function providerClient(config: Config, providerId: string, providerName: string): ProviderClient {
  const factory = FACTORIES[providerId];
  if (!factory) throw new Error(`no client for provider ${providerId}`);
  const client = factory(config.env, callbackUri(config, providerId));
  const guard = async <T>(step: 'start' | 'finish', run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw providerFailed(providerName, step, error);
    }
  };
  return {
    authorizationUrl: (secrets) => guard('start', () => client.authorizationUrl(secrets)),
    identity: (url, secrets) => guard('finish', () => client.identity(url, secrets)),
  };
}
