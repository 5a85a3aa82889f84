/** `GET /api/admin/auth/providers` (spec §2 provider status entries, DESIGN §4.9). */
import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';

const entry = (id: string, name: string, configured: boolean, env_vars: string[]) => ({ id, name, configured, env_vars });

describe('GET /api/admin/auth/providers', () => {
  it('lists every provider; only email is configured when no credentials are set', async () => {
    const t = await makeApp({ config: { env: {} } });
    const res = await t.admin('GET', '/api/admin/auth/providers');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({
      providers: [
        entry('email', 'Email and password', true, []),
        entry('google', 'Google', false, ['GOOGLE_CLIENT_ID', 'GOOGLE_CLIENT_SECRET']),
        entry('github', 'GitHub', false, ['GITHUB_CLIENT_ID', 'GITHUB_CLIENT_SECRET']),
        entry('microsoft', 'Microsoft', false, ['MICROSOFT_CLIENT_ID', 'MICROSOFT_CLIENT_SECRET']),
        entry('gitlab', 'GitLab', false, ['GITLAB_CLIENT_ID', 'GITLAB_CLIENT_SECRET']),
        entry('discord', 'Discord', false, ['DISCORD_CLIENT_ID', 'DISCORD_CLIENT_SECRET']),
        entry('oidc', 'OpenID Connect', false, ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET']),
      ],
    });
  });

  it('marks a provider configured only when all its variables are set, and names oidc by OIDC_NAME', async () => {
    const t = await makeApp({
      config: {
        env: {
          GOOGLE_CLIENT_ID: 'g-id',
          GOOGLE_CLIENT_SECRET: 'g-secret',
          GITHUB_CLIENT_ID: 'only-the-id',
          MICROSOFT_CLIENT_ID: '',
          MICROSOFT_CLIENT_SECRET: 'm-secret',
          OIDC_ISSUER: 'https://sso.example.com',
          OIDC_CLIENT_ID: 'o-id',
          OIDC_CLIENT_SECRET: 'o-secret',
          OIDC_NAME: 'Company SSO',
        },
      },
    });
    const res = await t.admin('GET', '/api/admin/auth/providers');
    const byId = Object.fromEntries(res.json().providers.map((p: { id: string }) => [p.id, p]));
    expect(Object.keys(byId)).toEqual(['email', 'google', 'github', 'microsoft', 'gitlab', 'discord', 'oidc']);
    expect(byId.google.configured).toBe(true);
    expect(byId.github.configured).toBe(false);
    expect(byId.microsoft.configured).toBe(false);
    expect(byId.oidc).toEqual(entry('oidc', 'Company SSO', true, ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET']));
    // Values of the variables never appear in the answer.
    for (const secret of ['g-secret', 'o-secret', 'g-id', 'only-the-id']) expect(res.body).not.toContain(secret);
  });

  it('needs the admin token and takes no query', async () => {
    const t = await makeApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/admin/auth/providers' });
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });
});
