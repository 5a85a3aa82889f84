/**
 * What the SAML presets share (spec saml.md, "Operations and limits": presets for SAML apps): the
 * application is a SAML service provider (its `saml` field) with the entity ID, ACS and single
 * logout the app's own documentation gives, the NameID and attribute names the app reads (decision
 * 0431), and a redirect URI only because every application has one. The set-up text gives
 * Gatehouse's side as SAML apps ask for it: the metadata URL, or the entity ID, endpoints and the
 * signing certificate one by one.
 */
import type { SamlAttribute } from '../../db/schema.js';
import { baseOf, caTrust, oidcApplication } from '../build.js';
import type { PresetApplication, PresetInputs, PresetSaml, SetupContext } from '../types.js';

/** Where the administrator copies Gatehouse's signing certificate from (it is not a secret, but it rotates). */
export const SAML_CERTIFICATE = '<the signing certificate from the application\'s SAML tab>';

/** Gatehouse's IdP endpoints for this server (saml/sso.ts: the entity ID is `<issuer>/saml`). */
export function samlIdp(c: Pick<SetupContext, 'issuer'>) {
  return {
    entityId: `${c.issuer}/saml`,
    metadata: `${c.issuer}/saml/metadata`,
    sso: `${c.issuer}/saml/sso`,
    slo: `${c.issuer}/saml/slo`,
  };
}

/** The application: a SAML service provider, signing the Response and the Assertion. */
export function samlApplication(saml: (inputs: PresetInputs) => Omit<PresetSaml, 'signResponse' | 'signAssertion'> & Partial<Pick<PresetSaml, 'signResponse' | 'signAssertion'>>) {
  return (inputs: PresetInputs): PresetApplication =>
    // Not used for SAML; an application needs a redirect URI.
    oidcApplication({ redirectUris: [`${baseOf(inputs)}/`], saml: { signResponse: true, signAssertion: true, ...saml(inputs) } });
}

/** An attribute from a person field, a basic name unless `uri`. */
export const field = (name: string, f: 'email' | 'username' | 'name' | 'givenName' | 'familyName', uri = false): SamlAttribute => ({
  name, source: { type: 'personField', field: f }, ...(uri ? { nameFormat: 'uri' as const } : {}),
});
export const groups = (name: string, uri = false): SamlAttribute => ({ name, source: { type: 'groups' }, ...(uri ? { nameFormat: 'uri' as const } : {}) });

/** Gatehouse's side, one setting a line, for apps that want them one by one. */
export function idpSettings(c: SetupContext, labels: { entityId?: string; sso?: string; slo?: string | null; certificate?: string; metadata?: string | null } = {}) {
  const idp = samlIdp(c);
  return [
    ...(labels.metadata === null ? [] : [{ label: labels.metadata ?? 'IdP metadata URL', value: idp.metadata }]),
    { label: labels.entityId ?? 'IdP entity ID', value: idp.entityId },
    { label: labels.sso ?? 'IdP single sign-on URL (HTTP-Redirect or HTTP-POST)', value: idp.sso },
    ...(labels.slo === null ? [] : [{ label: labels.slo ?? 'IdP single logout URL', value: idp.slo }]),
    { label: labels.certificate ?? 'IdP signing certificate', value: SAML_CERTIFICATE },
  ];
}

/**
 * The notes every SAML preset ends with. The browser carries every SAML message, so the app never
 * connects to Gatehouse, unless it fetches the metadata by URL (`fetchesMetadata`): then, with LAN
 * TLS on, it must trust the local CA.
 */
export function samlNotes(c: SetupContext, options: { fetchesMetadata?: boolean } = {}): string[] {
  return [
    `Replace ${SAML_CERTIFICATE} with the certificate the application's Connect › SAML tab shows (or GET /api/admin/saml/keys; it is also in ${samlIdp(c).metadata}). After a key rotation the next certificate is published a week before it signs: add it beside the old one where the app takes several, or re-read the metadata.`,
    'If the app publishes its own SP metadata, importing it on the SAML tab (by URL or file) adds its signing certificate, so its signed requests are checked.',
    ...(options.fetchesMetadata ? caTrust.runtime(c) : []),
  ];
}
