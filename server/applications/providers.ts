/**
 * Sign-in providers known to Gatehouse (DESIGN §4.9) and whether each is configured from the
 * environment. `email` is always configured. External providers need `<ID>_CLIENT_ID` and
 * `<ID>_CLIENT_SECRET`; the generic `oidc` provider also needs `OIDC_ISSUER`.
 */
export interface ProviderInfo {
  id: string;
  name: string;
  env_vars: string[];
}

export const PROVIDERS: ProviderInfo[] = [
  { id: 'email', name: 'Email and password', env_vars: [] },
  { id: 'google', name: 'Google', env_vars: ['GOOGLE_CLIENT_ID', 'GOOGLE_CLIENT_SECRET'] },
  { id: 'github', name: 'GitHub', env_vars: ['GITHUB_CLIENT_ID', 'GITHUB_CLIENT_SECRET'] },
  { id: 'microsoft', name: 'Microsoft', env_vars: ['MICROSOFT_CLIENT_ID', 'MICROSOFT_CLIENT_SECRET'] },
  { id: 'gitlab', name: 'GitLab', env_vars: ['GITLAB_CLIENT_ID', 'GITLAB_CLIENT_SECRET'] },
  { id: 'discord', name: 'Discord', env_vars: ['DISCORD_CLIENT_ID', 'DISCORD_CLIENT_SECRET'] },
  { id: 'oidc', name: 'OpenID Connect', env_vars: ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] },
];

export const PROVIDER_IDS = PROVIDERS.map((p) => p.id);

export function isKnownProvider(id: string): boolean {
  return PROVIDER_IDS.includes(id);
}

export function providerName(id: string, env: Record<string, string | undefined>): string {
  if (id === 'oidc' && env.OIDC_NAME) return env.OIDC_NAME;
  return PROVIDERS.find((p) => p.id === id)?.name ?? id;
}

export function isConfigured(provider: ProviderInfo, env: Record<string, string | undefined>): boolean {
  return provider.env_vars.every((name) => Boolean(env[name]));
}

/** The provider status entries of spec §2, in a stable order. */
export function providerStatus(env: Record<string, string | undefined>) {
  return PROVIDERS.map((p) => ({
    id: p.id,
    name: providerName(p.id, env),
    configured: isConfigured(p, env),
    env_vars: [...p.env_vars],
  }));
}
