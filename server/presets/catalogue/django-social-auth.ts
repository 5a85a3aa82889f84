/**
 * Django with Python Social Auth's OpenID Connect backend (a stand-in for Django apps such as
 * Paperless-ngx). Facts from social-auth-core 4.3's documentation, "OpenID Connect"
 * (SOCIAL_AUTH_OIDC_OIDC_ENDPOINT, _KEY, _SECRET, the backend
 * social_core.backends.open_id_connect.OpenIdConnectAuth, USERNAME_KEY preferred_username) and
 * social-app-django's URLs (`/complete/oidc/`). Tested here: test/interop/presets-django.test.ts.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

export const djangoSocialAuth: Preset = {
  id: 'django-social-auth',
  name: 'Django (Python Social Auth)',
  category: 'library',
  protocol: 'oidc',
  version: 1,
  summary: 'A Django project signs people in with social-app-django\'s OpenID Connect backend.',
  inputs: [baseUrlInput('Django site address', 'https://app.lan.example')],
  runtime: 'python',
  testedWith: { status: 'tested', product: 'social-auth-core / social-app-django', version: '4.3.0 / 5.0.0 (Debian 12, Django 3.2)', test: 'test/interop/presets-django.test.ts' },
  sources: [
    { title: 'Python Social Auth: OpenID Connect backend', section: 'SOCIAL_AUTH_OIDC_OIDC_ENDPOINT, SOCIAL_AUTH_OIDC_KEY, SOCIAL_AUTH_OIDC_SECRET', url: 'https://python-social-auth.readthedocs.io/en/latest/backends/oidc.html', version: '4.3' },
    { title: 'Python Social Auth: Django configuration', section: 'AUTHENTICATION_BACKENDS, urls (social_django.urls: /login/<backend>/, /complete/<backend>/)', url: 'https://python-social-auth.readthedocs.io/en/latest/configuration/django.html', version: '5.0' },
  ],
  caveats: [
    'SOCIAL_AUTH_OIDC_OIDC_ENDPOINT is the issuer without /.well-known/openid-configuration: the backend adds it.',
    'The OpenID Connect backend imports python-jose, which Debian\'s python3-social-auth-core only recommends: install python3-jose (pip: python-jose) too.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: ['openid', 'profile', 'email'] },
  application: (inputs) => oidcApplication({ redirectUris: [`${baseOf(inputs)}/complete/oidc/`] }),
  requirements: () => [{ kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (the backend\'s USERNAME_KEY)' }],
  setup: (c) => {
    const settings = [
      '# settings.py',
      "INSTALLED_APPS += ['social_django']",
      "AUTHENTICATION_BACKENDS = ['social_core.backends.open_id_connect.OpenIdConnectAuth', 'django.contrib.auth.backends.ModelBackend']",
      `SOCIAL_AUTH_OIDC_OIDC_ENDPOINT = '${c.issuer}'`,
      `SOCIAL_AUTH_OIDC_KEY = '${c.app.id}'`,
      `SOCIAL_AUTH_OIDC_SECRET = '${PLACEHOLDERS.clientSecret}'`,
      "LOGIN_URL = '/login/oidc/'",
      '',
      '# urls.py',
      "# urlpatterns += [path('', include('social_django.urls', namespace='social'))]",
    ].join('\n');
    return {
      settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
      files: [{ name: 'settings.py', content: `${settings}\n` }],
      notes: ['Run the migrations of social_django after adding it (python manage.py migrate).', PLACEHOLDER_NOTE, ...caTrust.runtime(c), TEST_SIGN_IN_NOTE],
    };
  },
};
