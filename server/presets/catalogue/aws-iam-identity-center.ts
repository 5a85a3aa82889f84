/**
 * AWS IAM Identity Center with Gatehouse as its external identity provider (spec saml.md,
 * presets). Facts from the IAM Identity Center User Guide: "How to connect to an external
 * identity provider" (the service provider metadata, its ACS URL and issuer URL) and "Using SAML
 * and SCIM identity federation with external identity providers" (the NameID must be an e-mail
 * address in the emailAddress format; users must be provisioned; no encryption key), 2025.
 */
import { baseUrlInput } from '../build.js';
import type { Preset } from '../types.js';
import { samlApplication, samlIdp, samlNotes } from './saml-family.js';

export const awsIamIdentityCenter: Preset = {
  id: 'aws-iam-identity-center',
  name: 'AWS IAM Identity Center',
  category: 'saml',
  protocol: 'saml',
  version: 1,
  summary: 'AWS IAM Identity Center (the AWS access portal) signs people in through Gatehouse as its external identity provider, by e-mail address.',
  inputs: [
    baseUrlInput('AWS access portal URL', 'https://d-1234567890.awsapps.com/start'),
    { key: 'acsUrl', label: 'IAM Identity Center Assertion Consumer Service (ACS) URL', example: 'https://eu-central-1.signin.aws.amazon.com/platform/saml/acs/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9', kind: 'url', required: true, hint: 'Settings › Identity source › Change identity source › External identity provider shows it under Service provider metadata.' },
    { key: 'issuerUrl', label: 'IAM Identity Center issuer URL', example: 'https://eu-central-1.signin.aws.amazon.com/platform/saml/d-1234567890', kind: 'url', required: true, hint: 'Shown beside the ACS URL: the SP\'s entity ID.' },
  ],
  testedWith: { status: 'configuration', product: 'AWS IAM Identity Center', version: 'User Guide, 2025', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'IAM Identity Center User Guide: How to connect to an external identity provider', section: 'Service provider metadata (ACS URL, issuer URL); Identity provider metadata', url: 'https://docs.aws.amazon.com/singlesignon/latest/userguide/how-to-connect-idp.html', version: '2025' },
    { title: 'IAM Identity Center User Guide: Using SAML and SCIM identity federation with external identity providers', section: 'SAML: nameID format emailAddress, an RFC 2822 addr-spec value; metadata under 75,000 characters; no encryption key', url: 'https://docs.aws.amazon.com/singlesignon/latest/userguide/other-idps.html', version: '2025' },
  ],
  caveats: [
    'IAM Identity Center signs in only users it already has, matched by the NameID (the e-mail address). Gatehouse does not provision them (no SCIM): create each user in IAM Identity Center with the same e-mail address (username = e-mail).',
    'This is IAM Identity Center. The older per-account IAM SAML federation (ACS https://signin.aws.amazon.com/saml, the Role and RoleSessionName attributes) is not this preset; make it with the generic SAML preset and a groupMap attribute named https://aws.amazon.com/SAML/Attributes/Role.',
    'Changing the identity source to an external IdP keeps users and assignments, but switching from or to Active Directory removes them (AWS\'s warning on that screen).',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes: [] },
  application: samlApplication((inputs) => ({
    entityId: inputs.issuerUrl ?? '',
    acs: [{ url: inputs.acsUrl ?? '' }],
    slo: null,
    nameId: { format: 'emailAddress', source: 'email' },
    attributes: null,
  })),
  requirements: () => [],
  setup: (c) => ({
    settings: [{ label: 'Identity provider metadata (file)', value: samlIdp(c).metadata }],
    files: [],
    notes: [
      `In IAM Identity Center: Settings › Identity source › Actions › Change identity source › External identity provider. Under Identity provider metadata, upload the file saved from ${samlIdp(c).metadata} (curl -o gatehouse-idp.xml ${samlIdp(c).metadata}); copy the ACS URL and issuer URL shown under Service provider metadata into this application (its inputs).`,
      'After a key rotation, upload the metadata again once the next certificate is published, before it starts signing.',
      ...samlNotes(c),
    ],
  }),
};
