/**
 * BookStack (spec saml.md, presets). Facts from BookStack's admin documentation "SAML 2.0
 * Authentication" (the .env settings AUTH_METHOD=saml2, SAML2_EMAIL_ATTRIBUTE,
 * SAML2_EXTERNAL_ID_ATTRIBUTE, SAML2_DISPLAY_NAME_ATTRIBUTES, SAML2_IDP_ENTITYID,
 * SAML2_AUTOLOAD_METADATA, SAML2_IDP_SSO, SAML2_IDP_SLO, SAML2_IDP_x509, SAML2_USER_TO_GROUPS,
 * SAML2_GROUP_ATTRIBUTE; the SP at /saml2/metadata, /saml2/acs, /saml2/sls) and app/Config/saml2.php, BookStack v24.x.
 */
import { baseOf, baseUrlInput, envBlock } from '../build.js';
import type { Preset } from '../types.js';
import { SAML_CERTIFICATE, field, groups, samlApplication, samlIdp, samlNotes } from './saml-family.js';

const DOCS = 'https://www.bookstackapp.com/docs/admin/saml2-auth/';

export const bookstack: Preset = {
  id: 'bookstack',
  name: 'BookStack',
  category: 'saml',
  protocol: 'saml',
  version: 1,
  summary: 'The BookStack wiki signs people in (and registers them) with SAML 2.0; Gatehouse groups can become BookStack roles.',
  inputs: [baseUrlInput('BookStack address (APP_URL)', 'https://docs.lan.example')],
  testedWith: { status: 'configuration', product: 'BookStack', version: 'v24.x', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'BookStack admin documentation: SAML 2.0 Authentication', section: 'BookStack Configuration (.env SAML2_* settings); Identity Provider Configuration (/saml2/metadata, /saml2/acs, /saml2/sls)', url: DOCS, version: 'v24.x' },
    { title: 'BookStack app/Config/saml2.php', section: 'email_attribute, display_name_attributes, external_id_attribute (the NameID when unset), user_to_groups, group_attribute', url: 'https://github.com/BookStackApp/BookStack/blob/release/app/Config/saml2.php', version: 'v24.x' },
  ],
  caveats: [
    'SAML2_AUTOLOAD_METADATA fetches the metadata from the URL in SAML2_IDP_ENTITYID, and Gatehouse\'s entity ID (…/saml) is not its metadata URL (…/saml/metadata): the preset sets autoloading off and gives the endpoints and certificate one by one.',
    'BookStack links people by the external ID; without SAML2_EXTERNAL_ID_ATTRIBUTE it is the NameID, here the persistent one, so a changed username or e-mail address keeps the account.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: samlApplication((inputs) => {
    const base = `${baseOf(inputs)}/saml2`;
    return {
      entityId: `${base}/metadata`,
      acs: [{ url: `${base}/acs` }],
      slo: { url: `${base}/sls`, binding: 'HTTP-Redirect' },
      nameId: { format: 'persistent', source: 'id' },
      attributes: [field('email', 'email'), field('name', 'name'), field('username', 'username'), groups('groups')],
    };
  }),
  requirements: () => [],
  setup: (c) => {
    const idp = samlIdp(c);
    return {
      settings: [],
      files: [{
        name: '.env',
        content: envBlock([
          ['AUTH_METHOD', 'saml2'],
          ['SAML2_NAME', 'Gatehouse'],
          ['SAML2_EMAIL_ATTRIBUTE', 'email'],
          ['SAML2_DISPLAY_NAME_ATTRIBUTES', 'name'],
          ['SAML2_IDP_ENTITYID', idp.entityId],
          ['SAML2_AUTOLOAD_METADATA', 'false'],
          ['SAML2_IDP_SSO', idp.sso],
          ['SAML2_IDP_SLO', idp.slo],
          ['SAML2_IDP_x509', SAML_CERTIFICATE],
          ['SAML2_USER_TO_GROUPS', 'true'],
          ['SAML2_GROUP_ATTRIBUTE', 'groups'],
          ['SAML2_REMOVE_FROM_GROUPS', 'false'],
        ]),
      }],
      notes: [
        'SAML2_IDP_x509 takes the certificate\'s base64 on one line, without the BEGIN and END lines.',
        'With SAML2_USER_TO_GROUPS, a BookStack role whose "External Authentication IDs" names a Gatehouse group id is given to that group\'s members.',
        ...samlNotes(c),
      ],
    };
  },
};
