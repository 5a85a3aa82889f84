/**
 * "Test sign-in": an authorization-code + PKCE round trip against the application's own settings,
 * ending at this panel's /admin/callback (which the admin registers as one of the app's redirect
 * URIs), then shows the decoded access token (aud, app_user). The admin API exchanges the code
 * (POST .../test-sign-in), so the client secret is not needed.
 */
import { createResource, createSignal, For, onCleanup, Show } from 'solid-js';
import { client, ok, type Application } from '../../api';
import { CALLBACK_CHANNEL, callbackUri, decodeJwt, pkceChallenge, randomString, type CallbackResult } from '../../oauth';
import { CopyButton, ErrorBox, useAction } from '../../ui';

const t = {
  refused: (error: string, description: string | undefined) => `The sign-in was refused: ${error}${description ? ` — ${description}` : ''}.`,
  blocked: 'The sign-in window was blocked. Allow pop-ups for this page and try again.',
  intro: ['Runs the real sign-in flow of ', ' (authorization code + PKCE, audience ', ') in a new window and shows the access token the app would receive.'] as const,
  needsUri: ['The test needs ', " among the application's redirect URIs. "] as const,
  addIt: 'Add it',
  waiting: 'Waiting for the sign-in window…',
  start: 'Start test sign-in',
  works: 'It works — access token issued',
  checksTitle: (name: string) => `What ${name} needs`,
  passed: 'passes',
  failed: 'fails',
  scopes: (scopes: string) => `Asks for the scopes the app asks for: ${scopes}.`,
  accessToken: 'access token',
};

interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
  /** The app preset's own requirements, checked against these tokens (empty without a preset). */
  checks: { text: string; passed: boolean; detail: string }[];
  id_token?: string;
}

export function TestSignInTab(props: { app: Application; onSaved: (app: Application) => void }) {
  const redirectUri = callbackUri();
  // The page's record, so that the other tabs (Settings saves the whole redirect list) see the change.
  const app = () => props.app;
  const [waiting, setWaiting] = createSignal(false);
  const [result, setResult] = createSignal<{ header: Record<string, unknown>; payload: Record<string, unknown>; raw: TokenResponse } | null>(null);
  // An application made from a preset signs in with the scopes its app asks for (Outline needs offline_access, …).
  const [preset] = createResource(
    () => app().preset?.id,
    (id) => ok(client.GET('/api/admin/presets/{id}', { params: { path: { id } } })),
  );
  const scope = () => {
    const scopes = preset()?.client.scopes ?? [];
    return scopes.includes('openid') ? scopes.join(' ') : 'openid profile';
  };
  const action = useAction();
  const registered = () => app().redirectUris.includes(redirectUri);
  let channel: BroadcastChannel | undefined;
  onCleanup(() => channel?.close());

  const register = async () => {
    const next = await action.run(() =>
      ok(client.PATCH('/api/admin/applications/{id}', { params: { path: { id: app().id } }, body: { redirectUris: [...app().redirectUris, redirectUri] } })),
    );
    if (next) props.onSaved(next);
  };

  const start = async () => {
    setResult(null);
    action.setError(null);
    const verifier = randomString(48);
    const state = randomString(16);
    const challenge = await pkceChallenge(verifier);
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: app().id,
      redirect_uri: redirectUri,
      scope: scope(),
      state,
      code_challenge: challenge,
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
        setResult({ ...decodeJwt(body.access_token), raw: body });
      });
    };
    const popup = window.open(`/api/auth/oauth2/authorize?${params}`, 'gatehouse-test-sign-in', 'popup,width=520,height=720');
    if (!popup) {
      setWaiting(false);
      action.setError(new Error(t.blocked));
    }
  };

  return (
    <>
      <div class="card">
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
        <Show
          when={registered()}
          fallback={
            <div class="notice">
              {t.needsUri[0]}
              <code>{redirectUri}</code>
              {t.needsUri[1]}
              <button type="button" onClick={register} disabled={action.busy()}>
                {t.addIt}
              </button>
            </div>
          }
        >
          <button type="button" class="primary" onClick={start} disabled={waiting()}>
            {waiting() ? t.waiting : t.start}
          </button>
        </Show>
        <ErrorBox error={action.error()} />
      </div>
      <Show when={result()}>
        {(r) => (
          <div class="card" data-testid="test-sign-in-result">
            <h2>{t.works}</h2>
            <p>
              <strong>aud</strong> <code>{String(r().payload.aud)}</code> · <strong>sub</strong> <code>{String(r().payload.sub)}</code>
            </p>
            <p>
              <strong>app_user</strong> <code>{JSON.stringify(r().payload.app_user)}</code>
            </p>
            <Show when={r().raw.checks.length}>
              <h3>{t.checksTitle(app().name)}</h3>
              <ul class="checks" data-testid="test-sign-in-checks">
                <For each={r().raw.checks}>
                  {(check) => (
                    <li class={check.passed ? 'ok' : 'bad'}>
                      <span class={`badge ${check.passed ? 'ok' : 'bad'}`}>{check.passed ? t.passed : t.failed}</span> {check.text}: <span class="hint">{check.detail}</span>
                    </li>
                  )}
                </For>
              </ul>
            </Show>
            <pre>{JSON.stringify({ header: r().header, payload: r().payload }, null, 2)}</pre>
            <CopyButton value={r().raw.access_token} label={t.accessToken} />
          </div>
        )}
      </Show>
    </>
  );
}
