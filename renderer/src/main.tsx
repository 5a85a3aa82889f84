/** Entry: decides between the sign-in screen and the panel, and declares the routes. */
import { render } from 'solid-js/web';
import { createSignal, For, lazy, onMount, Show, type ParentProps } from 'solid-js';
import { A, Route, Router, useLocation } from '@solidjs/router';
import { createEffect } from 'solid-js';
import './styles.css';
import { client, ok } from './api';
import { session } from './session';
import { strings } from './strings';
import { ConfirmHost, ErrorBox, Loading, ToastHost, useAction } from './ui';
import { OverviewPage } from './pages/overview/overview';
import { ApplicationsPage, NewApplicationPage } from './pages/applications/list';
import { ApplicationPage } from './pages/applications/application';
import { SsoGroupsPage } from './pages/applications/sso-groups';
import { GroupPage, GroupsPage } from './pages/people/groups';
import { ProvidersPage } from './pages/settings/providers';
import { DirectoryPage, DirectorySourcePage } from './pages/settings/directory';
import { AuditPage } from './pages/operations/audit';
import { PeoplePage, PersonPage } from './pages/people/people';
import { KeysPage } from './pages/operations/keys';
import { BackupsPage } from './pages/operations/backups';
import { OperationsPage } from './pages/operations/data-lifecycle';

import { CallbackPage } from './pages/sign-in/callback';
import { PanelSignInLanding, SignInScreen } from './pages/sign-in/sign-in';
import { AdministratorsPage, PasswordPolicyPage } from './pages/settings/administrators';
import { isOwner, managesPeople, me } from './me';

const t = strings;
// The QR code library loads with the LAN TLS page only.
const TlsPage = lazy(() => import('./pages/operations/tls').then((m) => ({ default: m.TlsPage })));

/** Who sees an entry: everyone, people managers (and owners), or owners only. */
type Audience = 'all' | 'people' | 'owner';
const NAV: [href: string, label: string, audience: Audience, end?: boolean][] = [
  ['/', t.nav.overview, 'all', true],
  ['/applications', t.nav.applications, 'all'],
  ['/people', t.nav.people, 'people'],
  ['/groups', t.nav.groups, 'people'],
  ['/sso-groups', t.nav.ssoGroups, 'owner'],
  ['/providers', t.nav.providers, 'owner'],
  ['/directory', t.nav.directory, 'owner'],
  ['/audit-log', t.nav.audit, 'owner'],
  ['/administrators', t.nav.administrators, 'owner'],
  ['/settings/password-policy', t.nav.settings, 'owner'],
];
const OPS_NAV: [href: string, label: string][] = [
  ['/signing-keys', t.nav.keys],
  ['/backups', t.nav.backups],
  ['/data-lifecycle', t.nav.lifecycle],
  ['/lan-tls', t.nav.tls],
];
const shown = (audience: Audience) => audience === 'all' || (audience === 'people' ? managesPeople() : isOwner());

/**
 * The frame: a sidebar on wide windows; on narrow ones (phones, a narrow desktop window) a top
 * bar whose "Menu" button opens the same navigation as a drawer, closed again on every move.
 */
function Layout(props: ParentProps) {
  const [open, setOpen] = createSignal(false);
  const location = useLocation();
  createEffect(() => {
    location.pathname;
    setOpen(false);
  });
  return (
    <div class="shell" classList={{ 'menu-open': open() }}>
      <header class="topbar">
        <span class="brand">{t.product}</span>
        <button type="button" class="menu-button" aria-expanded={open()} aria-controls="main-nav" onClick={() => setOpen(!open())}>
          {open() ? t.nav.closeMenu : t.nav.menu}
        </button>
      </header>
      <nav class="side" id="main-nav" aria-label={t.nav.label}>
        <div class="brand">{t.product}</div>
        <For each={NAV.filter(([, , audience]) => shown(audience))}>
          {([href, label, , end]) => (
            <A href={href} end={end}>
              {label}
            </A>
          )}
        </For>
        <Show when={isOwner()}>
          <div class="nav-group" id="nav-ops">
            {t.nav.operations}
          </div>
          <For each={OPS_NAV}>{([href, label]) => <A href={href}>{label}</A>}</For>
        </Show>
        <div class="spacer" />
        <Show when={me()}>
          {(who) => (
            <div class="who" data-testid="signed-in-as">
              <strong>{who().name ?? who().email ?? t.nav.viaToken}</strong>
              <span class="muted">{t.nav.roles[who().role ?? ''] ?? ''}</span>
            </div>
          )}
        </Show>
        <Show when={!session.desktop()}>
          <button type="button" onClick={() => void session.signOut()}>
            {t.nav.signOut}
          </button>
        </Show>
      </nav>
      <main id="content">{props.children}</main>
      <ConfirmHost />
      <ToastHost />
    </div>
  );
}

function App() {
  const [ready, setReady] = createSignal(false);
  const [error, setError] = createSignal<unknown>(null);
  // The panel's own sign-in coming back, or a reload of a panel signed in with Gatehouse.
  const [landing, setLanding] = createSignal(location.pathname.startsWith('/admin/signed-in'));
  const [failure, setFailure] = createSignal<string | undefined>();
  onMount(() => {
    session.init().then(
      () => {
        if (!session.token() && session.wasSignedIn()) setLanding(true);
        setReady(true);
      },
      (e) => setError(e),
    );
  });
  // The OAuth callback of the test sign-in needs no admin token.
  if (location.pathname.startsWith('/admin/callback')) return <CallbackPage />;
  return (
    <Show when={ready()} fallback={error() ? <ErrorBox error={error()} /> : <Loading />}>
      <Show
        when={session.token()}
        fallback={
          <Show when={landing()} fallback={<SignInScreen failure={failure()} />}>
            <PanelSignInLanding onDone={(reason) => (setFailure(reason), setLanding(false))} />
          </Show>
        }
      >
        <Router base="/admin" root={Layout}>
          <Route path="/" component={OverviewPage} />
          <Route path="/applications" component={ApplicationsPage} />
          <Route path="/applications/new" component={NewApplicationPage} />
          <Route path="/applications/:id/:tab?" component={ApplicationPage} />
          <Route path="/people" component={PeoplePage} />
          <Route path="/people/:id" component={PersonPage} />
          <Route path="/groups" component={GroupsPage} />
          <Route path="/groups/:id" component={GroupPage} />
          <Route path="/sso-groups" component={SsoGroupsPage} />
          <Route path="/providers" component={ProvidersPage} />
          <Route path="/directory" component={DirectoryPage} />
          <Route path="/directory/:id" component={DirectorySourcePage} />
          <Route path="/audit-log" component={AuditPage} />
          <Route path="/signing-keys" component={KeysPage} />
          <Route path="/backups" component={BackupsPage} />
          <Route path="/data-lifecycle" component={OperationsPage} />
          <Route path="/lan-tls" component={TlsPage} />
          <Route path="/administrators" component={AdministratorsPage} />
          <Route path="/settings/password-policy" component={PasswordPolicyPage} />
          <Route path="*" component={() => <p>{t.common.noSuchPage}</p>} />
        </Router>
      </Show>
    </Show>
  );
}

render(() => <App />, document.getElementById('root')!);
