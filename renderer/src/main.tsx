/** Entry: decides between the sign-in screen and the panel, and declares the routes. */
import { render } from 'solid-js/web';
import { createSignal, onMount, Show, type ParentProps } from 'solid-js';
import { A, Route, Router } from '@solidjs/router';
import './styles.css';
import { request } from './api';
import { session } from './session';
import { ConfirmHost, ErrorBox, Loading, ToastHost, useAction } from './ui';
import { OverviewPage } from './pages/overview';
import { ApplicationsPage, NewApplicationPage } from './pages/applications';
import { ApplicationPage } from './pages/application';
import { SsoGroupsPage } from './pages/sso-groups';
import { ProvidersPage } from './pages/providers';
import { AuditPage } from './pages/audit';
import { CallbackPage } from './pages/callback';

function SignIn() {
  const [value, setValue] = createSignal('');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const token = value().trim();
    const ok = await action.run(() => request('GET', '/api/admin/overview', undefined, token));
    if (ok !== undefined) session.signIn(token);
  };
  return (
    <main class="signin">
      <form class="card" onSubmit={submit}>
        <h1>Gatehouse control panel</h1>
        <Show when={session.expiredNotice()}>
          <div class="notice">The admin token is no longer accepted. Sign in again.</div>
        </Show>
        <label class="field">
          <span>Admin token</span>
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
            Find it in <code>&lt;data dir&gt;/admin-token</code> or run <code>gatehouse admin-token</code>. It is kept
            only for this browser tab.
          </span>
        </label>
        <ErrorBox error={action.error()} />
        <div class="actions">
          <button class="primary" type="submit" disabled={action.busy() || !value().trim()}>
            {action.busy() ? 'Checking…' : 'Sign in'}
          </button>
        </div>
      </form>
    </main>
  );
}

function Layout(props: ParentProps) {
  return (
    <div class="shell">
      <nav class="side" aria-label="Main">
        <div class="brand">Gatehouse</div>
        <A href="/" end>
          Overview
        </A>
        <A href="/applications">Applications</A>
        <A href="/sso-groups">SSO groups</A>
        <A href="/providers">Sign-in providers</A>
        <A href="/audit-log">Audit log</A>
        <div class="spacer" />
        <Show when={!session.desktop()}>
          <button type="button" onClick={() => session.signOut()}>
            Sign out
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
          <Route path="/sso-groups" component={SsoGroupsPage} />
          <Route path="/providers" component={ProvidersPage} />
          <Route path="/audit-log" component={AuditPage} />
          <Route path="*" component={() => <p>There is no such page.</p>} />
        </Router>
      </Show>
    </Show>
  );
}

render(() => <App />, document.getElementById('root')!);
