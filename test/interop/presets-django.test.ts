/**
 * The Django (Python Social Auth) preset for real (issue 37, item 5; a stand-in for Django apps
 * such as Paperless-ngx): a minimal Django project in a temporary directory, run by Debian's
 * /usr/bin/python3 with python3-django and python3-social-django, gets the settings of GET
 * …/setup alone (its placeholders filled in) on top of an empty project, and a person signs in:
 * /login/oidc/ sends the browser to Gatehouse, /complete/oidc/ takes the code back, and Django's
 * new user is named by preferred_username.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { freePort } from '../helpers/free-port.js';
import { fill, fromPreset, setupFile, signedInBrowser } from '../helpers/preset-interop.js';

const PYTHON = '/usr/bin/python3';

let server: OAuthServer;
let dir: string;
let django: ChildProcess | undefined;
let site: string;
let log = '';

/** An empty Django project: what any Django app brings before it adds sign-in. */
const BASE_SETTINGS = (dir: string) => [
  "SECRET_KEY = 'interop-only-not-secret-0123456789abcdefghijklmnopqrstuvwxyz'",
  'DEBUG = True',
  "ALLOWED_HOSTS = ['localhost']",
  "INSTALLED_APPS = ['django.contrib.auth', 'django.contrib.contenttypes', 'django.contrib.sessions']",
  "MIDDLEWARE = ['django.contrib.sessions.middleware.SessionMiddleware', 'django.contrib.auth.middleware.AuthenticationMiddleware']",
  "ROOT_URLCONF = 'site_urls'",
  `DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': '${join(dir, 'db.sqlite3')}'}}`,
  "DEFAULT_AUTO_FIELD = 'django.db.models.AutoField'",
  "LOGIN_REDIRECT_URL = '/'",
  "USE_TZ = True",
  '',
].join('\n');

const URLS = [
  'from django.http import HttpResponse, HttpResponseRedirect',
  'from django.urls import include, path',
  'from django.conf import settings',
  '',
  'def home(request):',
  '    if not request.user.is_authenticated:',
  '        return HttpResponseRedirect(settings.LOGIN_URL)',
  "    return HttpResponse(f'{request.user.username} <{request.user.email}>')",
  '',
  "urlpatterns = [path('', home), path('', include('social_django.urls', namespace='social'))]",
  '',
].join('\n');

beforeAll(async () => {
  server = await startOAuthServer();
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-presets-django-'));
  const port = await freePort();
  site = `http://localhost:${port}`;
  const { app, setup } = await fromPreset(server, 'django-social-auth', { baseUrl: site }, 'django-app');
  expect(app.redirectUris).toEqual([`${site}/complete/oidc/`]);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'site_settings.py'), `${BASE_SETTINGS(dir)}\n${fill(setupFile(setup, 'settings.py'), { clientSecret: app.clientSecret! })}`);
  writeFileSync(join(dir, 'site_urls.py'), URLS);
  const env = { PATH: '/usr/bin:/bin', PYTHONPATH: dir, DJANGO_SETTINGS_MODULE: 'site_settings', HOME: dir };
  const migrated = spawnSync(PYTHON, ['-m', 'django', 'migrate', '--noinput'], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
  expect(migrated.status, migrated.stderr).toBe(0);
  django = spawn(PYTHON, ['-m', 'django', 'runserver', `127.0.0.1:${port}`, '--noreload', '--nothreading'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  django.stdout!.on('data', (chunk) => (log += chunk));
  django.stderr!.on('data', (chunk) => (log += chunk));
  for (let i = 0; i < 100; i++) {
    if (await fetch(`${site}/login/oidc/`, { redirect: 'manual' }).then(() => true, () => false)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 90_000);

afterAll(async () => {
  if (django?.pid && django.exitCode === null) {
    const exited = new Promise((resolve) => django!.once('exit', resolve));
    process.kill(django.pid, 'SIGTERM');
    await exited;
  }
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Django with social-app-django, configured from the preset\'s set-up text', () => {
  it('signs a member in through /login/oidc/ and /complete/oidc/; the Django user is named by preferred_username', async () => {
    const browser = await signedInBrowser(server, 'django-app', 'ada@example.com', [new URL(site).host]);
    const visit = await browser.follow(`${site}/`);
    expect(visit.res.status, `${log}\n${JSON.stringify(visit.hops)}`).toBe(200);
    expect(await visit.res.text()).toBe('ada <ada@example.com>');
    expect(visit.hops.map((h) => new URL(h.url).pathname)).toEqual(['/', '/login/oidc/', '/api/auth/oauth2/authorize', '/complete/oidc/', '/']);
  });
});
