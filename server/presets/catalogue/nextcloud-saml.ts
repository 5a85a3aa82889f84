/**
 * Nextcloud with the SSO & SAML authentication app, user_saml (spec saml.md, presets). Facts from
 * the app's routes (appinfo/routes.php: /saml/metadata, /saml/acs, /saml/sls under
 * /apps/user_saml) and its settings (general-uid_mapping, saml-attribute-mapping-*_mapping,
 * idp-entityId, idp-singleSignOnService.url, idp-singleLogoutService.url, idp-x509cert), user_saml 6.x.
 */
import { baseOf, baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { SAML_CERTIFICATE, field, groups, samlApplication, samlIdp, samlNotes } from './saml-family.js';

const ROUTES = 'https://github.com/nextcloud/user_saml/blob/master/appinfo/routes.php';

export const nextcloudSaml: Preset = {
  id: 'nextcloud-saml',
  name: 'Nextcloud (SSO & SAML app)',
  category: 'saml',
  protocol: 'saml',
  version: 1,
  summary: 'Nextcloud signs people in with its SSO & SAML authentication app (user_saml); the Gatehouse username is the Nextcloud user id.',
  inputs: [baseUrlInput('Nextcloud address', 'https://cloud.lan.example')],
  runtime: 'nextcloud',
  testedWith: { status: 'configuration', product: 'Nextcloud user_saml', version: '6.x', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'user_saml routes', section: 'appinfo/routes.php: SAML#getMetadata /saml/metadata, SAML#assertionConsumerService /saml/acs (POST), SAML#singleLogoutService /saml/sls (GET)', url: ROUTES, version: '6.x' },
    { title: 'user_saml admin settings', section: 'lib/Settings/Admin.php: general-uid_mapping, saml-attribute-mapping-displayName_mapping, -email_mapping, -group_mapping, idp settings', url: 'https://github.com/nextcloud/user_saml/blob/master/lib/Settings/Admin.php', version: '6.x' },
  ],
  caveats: [
    'The user id Nextcloud keeps is the uid attribute (the Gatehouse username) and cannot change in Nextcloud later: change usernames in Gatehouse only before people first sign in to Nextcloud.',
    'Keep a way in while setting up: /login?direct=1 shows Nextcloud\'s own login form.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: samlApplication((inputs) => {
    const base = `${baseOf(inputs)}/apps/user_saml/saml`;
    return {
      entityId: `${base}/metadata`,
      acs: [{ url: `${base}/acs` }],
      slo: { url: `${base}/sls`, binding: 'HTTP-Redirect' },
      nameId: { format: 'persistent', source: 'id' },
      attributes: [field('uid', 'username'), field('email', 'email'), field('displayName', 'name'), groups('groups')],
    };
  }),
  requirements: () => [],
  setup: (c) => {
    const idp = samlIdp(c);
    const occ = (key: string, value: string) => `sudo -u www-data php occ saml:config:set --${key}="${value}" 1`;
    return {
      settings: [
        { label: 'Attribute to map the UID to', value: 'uid' },
        { label: 'Identifier of the IdP entity', value: idp.entityId },
        { label: 'URL Target of the IdP where the SP will send the Authentication Request Message', value: idp.sso },
        { label: 'URL Location of the IdP where the SP will send the SLO Request', value: idp.slo },
        { label: 'Public X.509 certificate of the IdP', value: SAML_CERTIFICATE },
        { label: 'Attribute to map the displayname to', value: 'displayName' },
        { label: 'Attribute to map the email address to', value: 'email' },
        { label: 'Attribute to map the users groups to', value: 'groups' },
      ],
      files: [{
        name: 'occ (the same settings from the command line)',
        content: [
          'sudo -u www-data php occ app:enable user_saml',
          'sudo -u www-data php occ config:app:set user_saml type --value=saml',
          'sudo -u www-data php occ saml:config:create',
          occ('general-uid_mapping', 'uid'),
          occ('idp-entityId', idp.entityId),
          occ('idp-singleSignOnService.url', idp.sso),
          occ('idp-singleLogoutService.url', idp.slo),
          occ('idp-x509cert', SAML_CERTIFICATE),
          occ('saml-attribute-mapping-displayName_mapping', 'displayName'),
          occ('saml-attribute-mapping-email_mapping', 'email'),
          occ('saml-attribute-mapping-group_mapping', 'groups'),
          '',
        ].join('\n'),
      }],
      notes: ['saml:config:create prints the provider\'s number; the lines above assume it is 1.', ...samlNotes(c)],
    };
  },
};
