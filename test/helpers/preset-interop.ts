/**
 * What the preset interop tests share (test/interop/presets-*.test.ts; spec presets-and-operations.md:
 * "a test creates the application from the preset, configures the real software from /setup alone,
 * and signs in"): the application made from the preset over the admin API, its set-up text with the
 * placeholders filled in (the only thing the test adds to it), and a person signed in to Gatehouse
 * in a browserless browser, so that the real software's own redirects complete the sign-in.
 */
import { expect } from 'vitest';
import { PLACEHOLDERS } from '../../server/presets/build.js';
import { Browser } from './browser-jar.js';
import { PASSWORD, adminJsonOf, type OAuthServer } from './oauth-server.js';

export interface PresetApp {
  id: string;
  name: string;
  redirectUris: string[];
  clientSecret?: string;
  ldapPassword?: string;
  ldap: { bindDn: string };
}

export interface Setup {
  settings: { label: string; value: string }[];
  files: { name: string; content: string }[];
  notes: string[];
}

/** Creates the application from the preset (its sign-up opened for the test's people) and reads its set-up text. */
export async function fromPreset(server: Pick<OAuthServer, 'admin'>, preset: string, presetInputs: Record<string, string>, id?: string) {
  const app = await adminJsonOf<PresetApp>(server, 'POST', '/api/admin/applications', { preset, presetInputs, ...(id ? { id } : {}) });
  await adminJsonOf(server, 'PATCH', `/api/admin/applications/${app.id}/auth-policy`, { signup_policy: 'open' });
  const setup = await adminJsonOf<Setup>(server, 'GET', `/api/admin/applications/${app.id}/setup`);
  // Secrets are never in the set-up text, only their placeholders.
  for (const secret of [app.clientSecret, app.ldapPassword].filter(Boolean)) expect(JSON.stringify(setup)).not.toContain(secret);
  return { app, setup };
}

/** A file of the set-up text, by name. */
export function setupFile(setup: Setup, name: string): string {
  const file = setup.files.find((f) => f.name === name);
  if (!file) throw new Error(`the set-up text has no file ${name} (it has ${setup.files.map((f) => f.name).join(', ')})`);
  return file.content;
}

/** A setting of the set-up text, by label. */
export function setupSetting(setup: Setup, label: string): string {
  const setting = setup.settings.find((s) => s.label === label);
  if (!setting) throw new Error(`the set-up text has no setting "${label}"`);
  return setting.value;
}

/** The set-up text with its placeholders replaced, as the administrator does: the only change a test makes. */
export function fill(text: string, values: { clientSecret?: string; ldapPassword?: string; appSecret?: string }): string {
  let out = text;
  if (values.clientSecret !== undefined) out = out.replaceAll(PLACEHOLDERS.clientSecret, values.clientSecret);
  if (values.ldapPassword !== undefined) out = out.replaceAll(PLACEHOLDERS.ldapPassword, values.ldapPassword);
  if (values.appSecret !== undefined) out = out.replaceAll(PLACEHOLDERS.appSecret, values.appSecret);
  expect(out, 'every placeholder filled').not.toMatch(/<(client-secret|ldap-service-account-password|random-secret)>/);
  return out;
}

/** `KEY=value` lines (a .env block) as an object; quotes around a value are dropped. */
export function parseEnv(text: string): Record<string, string> {
  return Object.fromEntries(
    text.split('\n').filter((l) => l.includes('=')).map((l) => {
      const at = l.indexOf('=');
      return [l.slice(0, at), l.slice(at + 1).replace(/^(["'])(.*)\1$/, '$2')];
    }),
  );
}

/**
 * A browserless browser signed in to Gatehouse as a member of the application (joining it by open
 * sign-up, or signing in when the person exists already or `existing` says so), serving Gatehouse's host and the app's
 * hosts: redirects between them are followed. `personId` is the person's id.
 */
export async function signedInBrowser(
  server: OAuthServer, applicationId: string, email: string, appHosts: string[], options: { existing?: boolean } = {},
): Promise<Browser & { personId: string }> {
  const gatehouse = new URL(server.url);
  const browser = new Browser([gatehouse.host, ...appHosts], { navigate: true });
  const post = (path: string, body: Record<string, string>) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD, applicationId, ...body }) });
  // `existing`: the person was made by an administrator (an application with a group rule takes no sign-ups).
  let res = options.existing ? await post('/api/auth/sign-in/email', {}) : await post('/api/auth/sign-up/email', { name: email.split('@')[0]! });
  if (res.status === 409) res = await post('/api/auth/sign-in/email', {});
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  const session = res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!;
  browser.setCookie(gatehouse.hostname, 'gatehouse_session', session.slice(session.indexOf('=') + 1, session.indexOf(';')));
  return Object.assign(browser, { personId: ((await res.json()) as { user: { id: string } }).user.id });
}
