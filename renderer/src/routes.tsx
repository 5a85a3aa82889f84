/**
 * The panel's pages: each address, its screen, and where the navigation lists it (and for whom:
 * the admin API call the screen makes first, me.ts `may`). One registry: a new screen — the
 * directory sources, the trust page — is a line here; a screen about one application is a part
 * of its page instead (pages/applications/sections.tsx).
 */
import { lazy, type Component } from 'solid-js';
import { strings } from './strings';
import { isOwner, may } from './me';
import { OverviewPage } from './pages/overview/overview';
import { ApplicationsPage, NewApplicationPage } from './pages/applications/list';
import { ApplicationPage } from './pages/applications/application';
import { SsoGroupsPage } from './pages/applications/sso-groups';
import { GroupPage, GroupsPage } from './pages/people/groups';
import { PeoplePage, PersonPage } from './pages/people/people';
import { ProvidersPage } from './pages/settings/providers';
import { DirectoryPage, DirectorySourcePage } from './pages/settings/directory';
import { AdministratorsPage, PasswordPolicyPage } from './pages/settings/administrators';
import { AuditPage } from './pages/operations/audit';
import { KeysPage } from './pages/operations/keys';
import { BackupsPage } from './pages/operations/backups';
import { OperationsPage } from './pages/operations/data-lifecycle';

const t = strings.nav;
// The QR code library loads with the LAN TLS page only.
const TlsPage = lazy(() => import('./pages/operations/tls').then((m) => ({ default: m.TlsPage })));

export interface PanelPage {
  /** The address under /admin (a Solid router pattern). */
  path: string;
  component: Component;
  /** Listed in the navigation: in the main list or under Operations, when `shown()` says so. */
  nav?: { label: string; group: 'main' | 'operations'; shown: () => boolean; end?: boolean };
}

const everyone = () => true;

export const PAGES: PanelPage[] = [
  { path: '/', component: OverviewPage, nav: { label: t.overview, group: 'main', shown: everyone, end: true } },
  { path: '/applications', component: ApplicationsPage, nav: { label: t.applications, group: 'main', shown: everyone } },
  { path: '/applications/new', component: NewApplicationPage },
  { path: '/applications/:id/:section?/:part?', component: ApplicationPage },
  { path: '/people', component: PeoplePage, nav: { label: t.people, group: 'main', shown: () => may('GET /people') } },
  { path: '/people/:id', component: PersonPage },
  { path: '/groups', component: GroupsPage, nav: { label: t.groups, group: 'main', shown: () => may('GET /groups') } },
  { path: '/groups/:id', component: GroupPage },
  { path: '/sso-groups', component: SsoGroupsPage, nav: { label: t.ssoGroups, group: 'main', shown: () => may('GET /sso-groups') } },
  // Readable by every administrator (the Access section lists them), managed by the owner.
  { path: '/providers', component: ProvidersPage, nav: { label: t.providers, group: 'main', shown: isOwner } },
  { path: '/directory', component: DirectoryPage, nav: { label: t.directory, group: 'main', shown: () => may('GET /directory-sources') } },
  { path: '/directory/:id', component: DirectorySourcePage },
  { path: '/audit-log', component: AuditPage, nav: { label: t.audit, group: 'main', shown: () => may('GET /audit-log') } },
  { path: '/administrators', component: AdministratorsPage, nav: { label: t.administrators, group: 'main', shown: () => may('GET /administrators') } },
  { path: '/settings/password-policy', component: PasswordPolicyPage, nav: { label: t.settings, group: 'main', shown: () => may('PATCH /settings/password-policy') } },
  { path: '/signing-keys', component: KeysPage, nav: { label: t.keys, group: 'operations', shown: () => may('GET /keys') } },
  { path: '/backups', component: BackupsPage, nav: { label: t.backups, group: 'operations', shown: () => may('GET /backups') } },
  { path: '/data-lifecycle', component: OperationsPage, nav: { label: t.lifecycle, group: 'operations', shown: () => may('GET /operations') } },
  { path: '/lan-tls', component: TlsPage, nav: { label: t.tls, group: 'operations', shown: () => may('GET /tls') } },
];
