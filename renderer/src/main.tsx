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
import { OverviewPage } from './pages/overview';
import { ApplicationsPage, NewApplicationPage } from './pages/applications';
import { ApplicationPage } from './pages/application';
import { SsoGroupsPage } from './pages/sso-groups';
import { GroupPage, GroupsPage } from './pages/groups';
import { ProvidersPage } from './pages/providers';
import { AuditPage } from './pages/audit';
import { PeoplePage, PersonPage } from './pages/people';
import { KeysPage } from './pages/keys';
import { BackupsPage } from './pages/backups';

import { CallbackPage } from './pages/callback';

const t = strings;
// The QR code library loads with the LAN TLS page only.
const TlsPage = lazy(() => import('./pages/tls').then((m) => ({ default: m.TlsPage })));

function SignIn() {
  const [value, setValue] = createSignal('');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const token = value().trim();
    const answer = await action.run(() => ok(client.GET('/api/admin/overview', { headers: { authorization: `Bearer ${token}` } })));
    if (answer !== undefined) session.signIn(token);
  };
  const [before, file, between, command, after] = t.signIn.hintWhere('<data dir>/admin-token', 'gatehouse admin-token');
  return (
    <main class="signin">
      <form class="card" onSubmit={submit}>
        <h1>{t.signIn.title}</h1>
        <Show when={session.expiredNotice()}>
          <div class="notice">{t.signIn.expired}</div>
        </Show>
        <label class="field">
          <span>{t.signIn.token}</span>
          <input
            type="password"
            name="adminToken"
            autocomplete="current-password"
            value={value()}
            onInput={(e) => setValue(e.currentTarget.value)}
            required
            autofocus
          />
          <span class="hint">
            {before}
            <code>{file}</code>
            {between}
            <code>{command}</code>
            {after} {t.signIn.hint}
          </span>
        </label>
        <ErrorBox error={action.error()} />
        <div class="actions">
          <button class="primary" type="submit" disabled={action.busy() || !value().trim()}>
            {action.busy() ? t.signIn.checking : t.signIn.submit}
          </button>
        </div>
      </form>
    </main>
  );
}

const NAV: [href: string, label: string, end?: boolean][] = [
  ['/', t.nav.overview, true],
  ['/applications', t.nav.applications],
  ['/people', t.nav.people],
  ['/groups', t.nav.groups],
  ['/sso-groups', t.nav.ssoGroups],
  ['/providers', t.nav.providers],
  ['/audit-log', t.nav.audit],
];
const OPS_NAV: [href: string, label: string][] = [
  ['/signing-keys', t.nav.keys],
  ['/backups', t.nav.backups],
  ['/lan-tls', t.nav.tls],
];

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
        <For each={NAV}>
          {([href, label, end]) => (
            <A href={href} end={end}>
              {label}
            </A>
          )}
        </For>
        <div class="nav-group" id="nav-ops">
          {t.nav.operations}
        </div>
        <For each={OPS_NAV}>{([href, label]) => <A href={href}>{label}</A>}</For>
        <div class="spacer" />
        <Show when={!session.desktop()}>
          <button type="button" onClick={() => session.signOut()}>
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
  onMount(() => {
    session.init().then(
      () => setReady(true),
      (e) => setError(e),
    );
  });
  // The OAuth callback of the test sign-in needs no admin token.
  if (location.pathname.startsWith('/admin/callback')) return <CallbackPage />;
  return (
    <Show when={ready()} fallback={error() ? <ErrorBox error={error()} /> : <Loading />}>
      <Show when={session.token()} fallback={<SignIn />}>
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
          <Route path="/audit-log" component={AuditPage} />
          <Route path="/signing-keys" component={KeysPage} />
          <Route path="/backups" component={BackupsPage} />
          <Route path="/lan-tls" component={TlsPage} />
          <Route path="*" component={() => <p>{t.common.noSuchPage}</p>} />
        </Router>
      </Show>
    </Show>
  );
}

render(() => <App />, document.getElementById('root')!);
