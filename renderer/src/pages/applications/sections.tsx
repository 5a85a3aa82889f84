/**
 * The application page's sections, by task, and the parts inside them: ONE registry. Each entry
 * has its own address (/applications/:id/<section>/<part>), a label, and the admin API call it
 * makes first, so a role that cannot make it does not see it (me.ts `may`, the server's table).
 *
 * At most 8 sections, so the row of them fits a 1280 px window (and the desktop app's 1200 px)
 * with Test sign-in on screen; on a phone the row wraps. A new protocol (SAML, RADIUS) is one
 * entry in CONNECT_PROTOCOLS; a new screen about one application is a part of a section, not a
 * ninth section. The addresses of the page before it had sections keep working (LEGACY_PATHS).
 */
import type { Component } from 'solid-js';
import type { Application, PresetDetail } from '../../api';
import { AppOverview } from './app-overview';
import { ForwardAuthPart, LdapPart, OidcPart, RadiusPart, SamlPart } from './connect';
import { TestSignInTab } from './test-sign-in';
import { AccessSection } from './access';
import { ClaimsTab } from './claims';
import { MembersTab } from './members';
import { InvitationsTab } from './invitations';
import { GeneralPart } from './general';
import { ApiKeysTab } from './api-keys';
import { WebhooksTab } from './webhooks';
import { LogoutTab } from './logout';
import { SigningCard } from './signing';

/** What every section and part is given. */
export interface SectionProps {
  app: Application;
  /** After a save: the answer's record replaces the page's; without one, the page reads it again. */
  onSaved: (next?: Application) => void;
  /** The app preset the application was made from (its protocol, the scopes its app asks for). */
  preset: PresetDetail | undefined;
}

export interface Part {
  /** Its address under the section: /applications/:id/<section>/<path>. */
  path: string;
  label: string;
  /** The admin API call it makes first (`'PATCH /applications/:id'`): hidden from roles without it. */
  needs: string;
  component: Component<SectionProps>;
}

export interface Section {
  /** Its address: /applications/:id/<path> ('' is the application's own address). */
  path: string;
  label: string;
  needs: string;
  /** A section of one screen; or `parts`, each with its own address, under a second row of tabs. */
  component?: Component<SectionProps>;
  parts?: readonly Part[];
  /** What the row of parts is called (for screen readers). */
  partsLabel?: string;
  /** The part a bare /<section> address shows; default: the first the caller may see. */
  defaultPart?: (app: Application, preset: PresetDetail | undefined) => string;
}

/**
 * The ways an application connects to Gatehouse, as tabs inside Connect. SAML and RADIUS are added
 * here by their own features (spec saml.md, radius.md): a part each, needing the call their
 * settings make.
 */
export const CONNECT_PROTOCOLS: Part[] = [
  { path: 'oidc', label: 'OpenID Connect', needs: 'PATCH /applications/:id', component: OidcPart },
  { path: 'forward-auth', label: 'Forward auth', needs: 'GET /applications/:id/forward-auth/snippet', component: ForwardAuthPart },
  { path: 'ldap', label: 'LDAP', needs: 'POST /applications/:id/ldap/password', component: LdapPart },
  { path: 'saml', label: 'SAML', needs: 'POST /applications/:id/saml/metadata', component: SamlPart },
  { path: 'radius', label: 'RADIUS', needs: 'POST /applications/:id/radius/clients/:name/secret', component: RadiusPart },
];

/** What Connect opens on: the protocol the app preset connects with, else the one in use. */
function connectedBy(app: Application, preset: PresetDetail | undefined): string {
  if (preset) return preset.protocol;
  if (app.forwardAuth) return 'forward-auth';
  if (app.saml) return 'saml';
  return 'oidc';
}

export const PEOPLE_PARTS: Part[] = [
  { path: 'members', label: 'Members', needs: 'GET /applications/:id/users', component: (p) => <MembersTab app={p.app} /> },
  { path: 'invitations', label: 'Invitations', needs: 'GET /applications/:id/invitations', component: (p) => <InvitationsTab app={p.app} /> },
];

export const ADVANCED_PARTS: Part[] = [
  { path: 'general', label: 'Name and pages', needs: 'PATCH /applications/:id', component: GeneralPart },
  { path: 'api-keys', label: 'API keys', needs: 'GET /applications/:id/api-keys', component: (p) => <ApiKeysTab app={p.app} /> },
  { path: 'webhooks', label: 'Webhooks', needs: 'PATCH /applications/:id', component: (p) => <WebhooksTab app={p.app} onSaved={p.onSaved} /> },
  { path: 'logout', label: 'Single logout', needs: 'PATCH /applications/:id', component: (p) => <LogoutTab app={p.app} onSaved={p.onSaved} /> },
  { path: 'signing', label: 'Token signing', needs: 'PATCH /applications/:id', component: (p) => <SigningCard app={p.app} onSaved={p.onSaved} /> },
];

export const SECTIONS: Section[] = [
  { path: '', label: 'Overview', needs: 'GET /applications/:id/activity', component: AppOverview },
  { path: 'connect', label: 'Connect', needs: 'PATCH /applications/:id', parts: CONNECT_PROTOCOLS, partsLabel: 'Protocols', defaultPart: connectedBy },
  { path: 'test', label: 'Test sign-in', needs: 'POST /applications/:id/test-sign-in', component: (p) => <TestSignInTab app={p.app} onSaved={p.onSaved} preset={p.preset} /> },
  { path: 'access', label: 'Access', needs: 'PATCH /applications/:id/auth-policy', component: AccessSection },
  { path: 'people', label: 'People', needs: 'GET /applications/:id/users', parts: PEOPLE_PARTS, partsLabel: 'People' },
  { path: 'claims', label: 'Claims', needs: 'PATCH /applications/:id', component: (p) => <ClaimsTab app={p.app} onSaved={p.onSaved} /> },
  { path: 'advanced', label: 'Advanced', needs: 'PATCH /applications/:id', parts: ADVANCED_PARTS, partsLabel: 'Advanced settings' },
];

/** Addresses of the page's tabs before it had sections, and where each one's screen is now. */
export const LEGACY_PATHS: Record<string, string> = {
  setup: 'connect',
  activity: '',
  'sign-in': 'access',
  members: 'people/members',
  invitations: 'people/invitations',
  'api-keys': 'advanced/api-keys',
  webhooks: 'advanced/webhooks',
  logout: 'advanced/logout',
  'forward-auth': 'connect/forward-auth',
};
