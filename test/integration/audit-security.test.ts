import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.js';
import { signIn } from '../helpers/accounts.js';
import { setUpClients, spaTokens, token } from '../helpers/oauth-inject.js';

describe('security events in the audit log', () => {
  it('records refresh-token reuse without the token', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    const first = await spaTokens(t, cookie);
    const rotated = await token(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: 'notes' });
    expect(rotated.statusCode).toBe(200);
    const reused = await token(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: 'notes' });
    expect(reused.statusCode).toBe(400);
    const res = await t.admin('GET', '/api/admin/audit-log?action=security.refresh_token_reused');
    expect(res.statusCode).toBe(200);
    const entries = res.json().entries;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'security.refresh_token_reused', applicationId: 'notes' });
    const text = JSON.stringify(res.json());
    expect(text).not.toContain(first.refresh_token!);
    expect(text).not.toContain(rotated.json().refresh_token);
  });

  it('records a sign-in lockout without the password', async () => {
    const t = await makeApp();
    await setUpClients(t);
    for (let i = 0; i < 5; i++) await signIn(t, { email: 'ada@example.com', password: `wrong-password-${i}` });
    const res = await t.admin('GET', '/api/admin/audit-log?action=security.sign_in_locked');
    expect(res.json().entries).toHaveLength(1);
    expect(JSON.stringify(res.json())).not.toContain('wrong-password');
  });
});
