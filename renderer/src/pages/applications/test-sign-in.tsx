/**
 * "Test sign-in": an authorization-code + PKCE round trip against the application's own settings,
 * ending at this panel's /admin/callback (which the admin registers as one of the app's redirect
 * URIs), then shows who signed in and what the app receives (the decoded tokens, and the app
 * preset's requirements checked against them). The admin API exchanges the code
 * (POST .../test-sign-in), so the client secret is not needed.
 *
 * - An administrator signed in to the panel with Gatehouse is not asked to sign in again: the
 *   panel's own session is reused (POST .../test-sign-in/session) before the window opens.
 * - "As a member": what a chosen member's tokens would carry and the preset's checks against them
 *   (GET .../users/:uid/preset-checks and .../claims), without anyone signing in as them.
 */
import { createSignal, For, onCleanup, Show } from 'solid-js';
import { client, ok, type Application, type PresetDetail } from '../../api';
import { CALLBACK_CHANNEL, callbackUri, decodeJwt, pkceChallenge, randomString, type CallbackResult } from '../../oauth';
import { createMemberPicker } from '../../member-picker';
import { session } from '../../session';
import { CopyButton, ErrorBox, useAction } from '../../ui';

const t = {
  title: 'Test sign-in',
  refused: (error: string, description: string | undefined) => `The sign-in was refused: ${error}${description ? ` — ${description}` : ''}.`,
  blocked: 'The sign-in window was blocked. Allow pop-ups for this page and try again.',
  intro: ['Signs in to ', ' in a new window the way the app will (authorization code with PKCE, audience ', '), and shows what the app receives.'] as const,
  reused: 'You are signed in to the panel: the window uses that sign-in and does not ask again.',
  asks: 'The window asks you to sign in (the admin token is not a person).',
  needsUri: ['The test needs ', " among the application's redirect URIs. "] as const,
  addIt: 'Add it and start',
  waiting: 'Waiting for the sign-in window…',
  start: 'Start test sign-in',
  works: 'It works',
  signedInAs: 'Signed in as',
  role: (role: string) => `member role here: ${role}`,
  checksTitle: (name: string) => `What ${name} needs`,
  passed: 'passes',
  failed: 'fails',
  scopes: (scopes: string) => `Asks for the scopes the app asks for: ${scopes}.`,
  accessToken: 'access token',
  idTokenClaims: 'ID token',
  accessTokenClaims: 'Access token',
  asMember: 'As a member',
  asMemberHint: 'What a member’s tokens would carry now, and whether they give the app what it needs — without signing in as them.',
  check: 'Check',
  noChecks: 'This application was not made from an app preset: there are no requirements to check, only the claims.',
};

interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
  /** The app preset's own requirements, checked against these tokens (empty without a preset). */
  checks: Check[];
  id_token?: string;
}
type Check = { text: string; passed: boolean; detail: string };

/** Who a token's claims say signed in: name and address, else the username, else the subject. */
function whoSignedIn(claims: Record<string, unknown>): string {
  const name = typeof claims.name === 'string' ? claims.name : undefined;
  const email = typeof claims.email === 'string' ? claims.email : undefined;
  if (name && email) return `${name} <${email}>`;
  return name ?? email ?? (typeof claims.preferred_username === 'string' ? claims.preferred_username : String(claims.sub ?? '?'));
}

function Checks(props: { checks: Check[]; app: Application }) {
  return (
    <Show when={props.checks.length}>
      <h3>{t.checksTitle(props.app.name)}</h3>
      <ul class="checks" data-testid="test-sign-in-checks">
        <For each={props.checks}>
          {(check) => (
            <li class={check.passed ? 'ok' : 'bad'}>
              <span class={`badge ${check.passed ? 'ok' : 'bad'}`}>{check.passed ? t.passed : t.failed}</span> {check.text}: <span class="hint">{check.detail}</span>
            </li>
          )}
        </For>
      </ul>
    </Show>
  );
}

function Claims(props: { label: string; claims: unknown }) {
  return (
    <section>
      <h3>{props.label}</h3>
      {/* Focusable: a long block scrolls, and a keyboard must reach it. */}
      <pre tabindex="0" aria-label={props.label} data-claims={props.label}>
        {JSON.stringify(props.claims, null, 2)}
      </pre>
    </section>
  );
}

/** A chosen member's checks and claims, read from the admin API (nobody signs in). */
function AsMember(props: { app: Application }) {
  const picker = createMemberPicker(() => props.app.id);
  const [shown, setShown] = createSignal<{ checks: Check[]; idToken: unknown; accessToken: unknown } | undefined>();
  const load = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const uid = picker.chosen();
    if (!uid) return;
    const answer = await load.run(async () => {
      const path = { id: props.app.id, uid };
      const checked = await ok(client.GET('/api/admin/applications/{id}/users/{uid}/preset-checks', { params: { path } }));
      const claims = await ok(client.GET('/api/admin/applications/{id}/users/{uid}/claims', { params: { path, query: { scope: checked.scope } } }));
      return { checks: checked.checks, idToken: claims.idToken, accessToken: claims.accessToken };
    });
    if (answer) setShown(answer);
  };
  return (
    <form class="card" novalidate onSubmit={submit} data-testid="test-as-member">
      <h2>{t.asMember}</h2>
      <p class="hint">{t.asMemberHint}</p>
      <Show when={picker.hasMembers()}>
        <div class="row">
          {picker.fields()}
          <button type="submit" disabled={load.busy() || !picker.chosen()}>
            {t.check}
          </button>
        </div>
      </Show>
      {picker.empty()}
      <ErrorBox error={load.error() ?? picker.error()} />
      <Show when={shown()}>
        {(s) => (
          <>
            <Show when={props.app.preset} fallback={<p class="muted">{t.noChecks}</p>}>
              <Checks checks={s().checks} app={props.app} />
            </Show>
            <div class="grid claims-preview">
              <Claims label={t.idTokenClaims} claims={s().idToken} />
              <Claims label={t.accessTokenClaims} claims={s().accessToken} />
            </div>
          </>
        )}
      </Show>
    </form>
  );
}

export function TestSignInTab(props: { app: Application; onSaved: (app: Application) => void; preset: PresetDetail | undefined }) {
  const redirectUri = callbackUri();
  // The page's record, so that the other sections (Connect saves the whole redirect list) see the change.
  const app = () => props.app;
  const [waiting, setWaiting] = createSignal(false);
  const [result, setResult] = createSignal<{ payload: Record<string, unknown>; id: Record<string, unknown> | undefined; raw: TokenResponse } | null>(null);
  // An application made from a preset signs in with the scopes its app asks for (Outline needs offline_access, …).
  const scope = () => {
    const scopes = props.preset?.client.scopes ?? [];
    return scopes.includes('openid') ? scopes.join(' ') : 'openid profile email';
  };
  const action = useAction();
  const registered = () => app().redirectUris.includes(redirectUri);
  let channel: BroadcastChannel | undefined;
  onCleanup(() => channel?.close());

  const start = async () => {
    setResult(null);
    action.setError(null);
    // Opened now, inside the click (a window opened after awaiting would be blocked), and sent on below.
    const popup = window.open('about:blank', 'gatehouse-test-sign-in', 'popup,width=520,height=720');
    if (!popup) return action.setError(new Error(t.blocked));
    const ready = await action.run(async () => {
      if (!registered()) {
        props.onSaved(await ok(client.PATCH('/api/admin/applications/{id}', { params: { path: { id: app().id } }, body: { redirectUris: [...app().redirectUris, redirectUri] } })));
      }
      // Signed in to the panel with Gatehouse: the window signs in with that session.
      if (session.mode() === 'panel') await ok(client.POST('/api/admin/applications/{id}/test-sign-in/session', { params: { path: { id: app().id } } }));
      return true;
    });
    if (!ready) return popup.close();
    const verifier = randomString(48);
    const state = randomString(16);
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: app().id,
      redirect_uri: redirectUri,
      scope: scope(),
      state,
      code_challenge: await pkceChallenge(verifier),
      code_challenge_method: 'S256',
      resource: app().audience,
    });
    channel?.close();
    channel = new BroadcastChannel(CALLBACK_CHANNEL);
    setWaiting(true);
    channel.onmessage = (event: MessageEvent<CallbackResult>) => {
      const r = event.data;
      if (r.state !== state) return;
      channel?.close();
      setWaiting(false);
      void action.run(async () => {
        if (r.error || !r.code) throw new Error(t.refused(r.error ?? 'no code', r.error_description ?? undefined));
        // The admin API exchanges the code as the application: no client secret is needed.
        const body: TokenResponse = await ok(
          client.POST('/api/admin/applications/{id}/test-sign-in', { params: { path: { id: app().id } }, body: { code: r.code, codeVerifier: verifier } }),
        );
        setResult({ payload: decodeJwt(body.access_token).payload, id: body.id_token ? decodeJwt(body.id_token).payload : undefined, raw: body });
      });
    };
    popup.location.href = `/api/auth/oauth2/authorize?${params}`;
  };

  return (
    <>
      <div class="card" data-testid="test-sign-in">
        <h2>{t.title}</h2>
        <p>
          {t.intro[0]}
          <strong>{app().name}</strong>
          {t.intro[1]}
          <code>{app().audience}</code>
          {t.intro[2]}
        </p>
        <Show when={app().preset}>
          <p class="hint">{t.scopes(scope())}</p>
        </Show>
        <Show when={!registered()}>
          <p class="notice">
            {t.needsUri[0]}
            <code>{redirectUri}</code>
            {t.needsUri[1]}
          </p>
        </Show>
        <div class="actions start">
          <button type="button" class="primary" onClick={() => void start()} disabled={waiting() || action.busy()}>
            {waiting() ? t.waiting : registered() ? t.start : t.addIt}
          </button>
        </div>
        <p class="hint">{session.mode() === 'panel' ? t.reused : t.asks}</p>
        <ErrorBox error={action.error()} />
      </div>
      <Show when={result()}>
        {(r) => (
          <div class="card" data-testid="test-sign-in-result">
            <h2>{t.works}</h2>
            <p>
              {t.signedInAs} <strong data-testid="signed-in-person">{whoSignedIn(r().id ?? r().payload)}</strong>
              <Show when={(r().payload.app_user as { role?: string } | undefined)?.role}>{(role) => <span class="muted"> · {t.role(role())}</span>}</Show>
            </p>
            <p>
              <strong>aud</strong> <code>{String(r().payload.aud)}</code> · <strong>sub</strong> <code>{String(r().payload.sub)}</code>
            </p>
            <Checks checks={r().raw.checks} app={app()} />
            <div class="grid claims-preview">
              <Show when={r().id}>{(id) => <Claims label={t.idTokenClaims} claims={id()} />}</Show>
              <Claims label={t.accessTokenClaims} claims={r().payload} />
            </div>
            <CopyButton value={r().raw.access_token} label={t.accessToken} />
          </div>
        )}
      </Show>
      <AsMember app={app()} />
    </>
  );
}
