/**
 * Where a sign-in may go back to (server/pages/return-to.ts): the hosted pages' `return_to` and the
 * control panel's own, one rule for both. The browser suite (panel-sign-in.test.ts) proves the
 * panel's deep links end where they started, and that a tampered one ends at /admin/.
 */
import { describe, expect, it } from 'vitest';
import { isReturnToText, PANEL_HOME, panelReturnTo } from '../../server/pages/return-to.js';
import { Registries } from '../../server/plugin-api/registries.js';
import { safeReturnTo } from '../../server/pages/sign-in-pages.js';

describe('the text a return_to may be', () => {
  it('is printable ASCII without a backslash, 1 to 4000 characters', () => {
    expect(isReturnToText('/admin/x?y=1#z')).toBe(true);
    expect(isReturnToText(`/admin/${'a'.repeat(3993)}`)).toBe(true);
    for (const bad of [undefined, null, '', `/admin/${'a'.repeat(3994)}`, '/admin/a b', '/admin/\\evil', '/admin/\n', '/admin/é', '/admin/\u0000']) {
      expect(isReturnToText(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

describe("the panel's return_to", () => {
  it('keeps a page inside /admin/ with its query and fragment', () => {
    for (const page of ['/admin/', '/admin/applications/grafana', '/admin/applications/grafana/connect/forward-auth', '/admin/audit-log?action=application.created&actor=admin', '/admin/people/p1#sessions']) {
      expect(panelReturnTo(page)).toBe(page);
    }
  });

  it('sends anything else to /admin/: other paths, other origins, dot segments, the sign-in steps themselves', () => {
    for (const bad of [
      undefined, null, '', '/account', '/admin', '/administrators', 'admin/x', '//evil.example/admin/', '///evil.example/admin/',
      'https://evil.example/admin/', 'javascript:alert(1)//admin/', '/admin/../account', '/admin/%2e%2e/account', '/admin/\\evil',
      '/admin/signed-in?code=x&state=y', '/admin/signed-in/', '/admin/callback?code=x',
    ]) {
      expect(panelReturnTo(bad), JSON.stringify(bad)).toBe(PANEL_HOME);
    }
    // Dot segments that stay inside come out resolved, as the address bar shows them.
    expect(panelReturnTo('/admin/people/../groups')).toBe('/admin/groups');
  });

  it("the hosted pages' rule keeps its prefixes: an authorization request, the device page, forward auth's hand-over, a plugin's browser flow", () => {
    // The registries a server closes after its plugins' set-up; one plugin flow is enough to show they count.
    const registries = new Registries();
    registries.browserFlows.add({ name: 'example', resumePrefix: '/example/resume?' });
    registries.close();
    const ctx = { registries };
    expect(safeReturnTo(ctx, '/api/auth/oauth2/authorize?client_id=x')).toBe('/api/auth/oauth2/authorize?client_id=x');
    expect(safeReturnTo(ctx, '/device?user_code=ABCD-EFGH')).toBe('/device?user_code=ABCD-EFGH');
    expect(safeReturnTo(ctx, '/example/resume?id=1')).toBe('/example/resume?id=1');
    for (const bad of [undefined, '/admin/', '//evil.example/api/auth/oauth2/authorize?', '/api/auth/oauth2/authorize?\\x', '/device?é', '/example/other']) {
      expect(safeReturnTo(ctx, bad), JSON.stringify(bad)).toBe('/account');
    }
  });
});
