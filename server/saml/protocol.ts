/**
 * SAML's protocol code, loaded with `import()` on the first SAML request — the metadata, SSO, SLO,
 * a sign-out that has SAML sessions to end, an SP's metadata imported — not at start (issue 45,
 * docs/decisions/0369-lazy-feature-code.md; scripts/bundle/lazy-features.mjs `LAZY_FEATURES`): messages,
 * bindings, signatures and the XML stack behind them. The routes stay registered at start
 * (routes.ts, admin-routes.ts); their handlers call in here.
 */
export { continueRequest, initiate, receiveAuthnRequest } from './sso.js';
export { receiveSlo, startBrowserLogout } from './logout.js';
export { idpMetadataXml } from './builder.js';
export { fromPost, fromRedirect, rawQuery } from './bindings.js';
export { fetchSpMetadata, readSpMetadata } from './sp-metadata.js';
