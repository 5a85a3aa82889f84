/**
 * The identity provider's paths, entity ID and consent scope (spec saml.md): what the routes, the
 * admin API and the account page need to know of SAML before its first request. The protocol's
 * code (sso.ts, logout.ts and what they use) is loaded on the first SAML request (protocol.ts,
 * issue 45, docs/decisions/0369-lazy-feature-code.md).
 */
export const SSO_PATH = '/saml/sso';
export const CONTINUE_PATH = '/saml/sso/continue';
export const INIT_PATH = '/saml/sso/init';
export const SLO_PATH = '/saml/slo';
export const METADATA_PATH = '/saml/metadata';

/** The IdP's entity ID: `<issuer>/saml`. */
export const idpEntityId = (issuer: string) => `${issuer}/saml`;

/** What the attributes tell an SP, in scope words, for the consent page (as forward auth's identity headers). */
export const SAML_SCOPE = 'openid profile email groups';
