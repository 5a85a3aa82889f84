/**
 * The launcher on the account page (spec saml.md, "IdP-initiated sign-on"): the person's SAML
 * applications that allow IdP-initiated sign-on, each a link to `/saml/sso/init?app=<id>`, after
 * the applications list; absent when there is none. Drawn by server/pages/templates/account/saml.eta.
 */
import type { AccountSection } from '../plugin-api/registries.js';
import { INIT_PATH } from './paths.js';

export function samlAccountSection(): AccountSection {
  return {
    name: 'saml',
    after: 'applications',
    view({ memberships }) {
      const apps = memberships
        .filter(({ m, app }) => m.status === 'active' && app.saml?.idpInitiated)
        .map(({ app }) => ({ id: app.id, name: app.name, href: `${INIT_PATH}?${new URLSearchParams({ app: app.id }).toString()}` }));
      return apps.length ? { apps } : undefined;
    },
  };
}
