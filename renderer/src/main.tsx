/** Entry: decides between the sign-in screen and the panel, and declares the routes. */
import { render } from 'solid-js/web';
import { createSignal, For, onMount, Show, type ParentProps } from 'solid-js';
import { A, Route, Router, useLocation } from '@solidjs/router';
import { createEffect } from 'solid-js';
import './styles.css';
import { session } from './session';
import { strings } from './strings';
import { ConfirmHost, ErrorBox, Loading, ToastHost } from './ui';
import { CallbackPage } from './pages/sign-in/callback';
import { PanelSignInLanding, SignInScreen } from './pages/sign-in/sign-in';
import { me } from './me';
import { PAGES } from './routes';

const t = strings;
const navOf = (group: 'main' | 'operations') => PAGES.filter((p) => p.nav?.group === group && p.nav.shown());

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
        <For each={navOf('main')}>
          {(page) => (
            <A href={page.path} end={page.nav!.end}>
              {page.nav!.label}
            </A>
          )}
        </For>
        <Show when={navOf('operations').length}>
          <div class="nav-group" id="nav-ops">
            {t.nav.operations}
          </div>
          <For each={navOf('operations')}>{(page) => <A href={page.path}>{page.nav!.label}</A>}</For>
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
          <For each={PAGES}>{(page) => <Route path={page.path} component={page.component} />}</For>
          <Route path="*" component={() => <p>{t.common.noSuchPage}</p>} />
        </Router>
      </Show>
    </Show>
  );
}

render(() => <App />, document.getElementById('root')!);
