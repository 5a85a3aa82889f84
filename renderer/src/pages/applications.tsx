import { createMemo, createResource, createSignal, For, Match, Show, Switch } from 'solid-js';
import { A, useNavigate } from '@solidjs/router';
import { api, type Application, type ClientType } from '../api';
import { fetchAll } from '../paged';
import { Async, CopyField, Empty, ErrorBox, useAction } from '../ui';
import { IntegrationSnippet } from './snippet';

export function ApplicationsPage() {
  const [apps] = createResource(() => fetchAll<Application>('/api/admin/applications'));
  return (
    <>
      <div class="row" style={{ 'justify-content': 'space-between' }}>
        <h1>Applications</h1>
        <A class="button primary" href="/applications/new">
          New application
        </A>
      </div>
      <Async resource={apps}>
        {(list) => (
          <Show
            when={list.length}
            fallback={
              <Empty>
                No applications yet. <A href="/applications/new">Create the first one</A> to let an app sign people in.
              </Empty>
            }
          >
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Client ID</th>
                  <th>Type</th>
                  <th>Audience</th>
                  <th>Sign-up</th>
                  <th>SSO group</th>
                </tr>
              </thead>
              <tbody>
                <For each={list}>
                  {(app) => (
                    <tr>
                      <td>
                        <A href={`/applications/${encodeURIComponent(app.id)}`}>{app.name}</A>
                      </td>
                      <td>
                        <code>{app.id}</code>
                      </td>
                      <td>{app.clientType}</td>
                      <td>
                        <code>{app.audience}</code>
                      </td>
                      <td>{app.authPolicy.signup_policy.replace('_', ' ')}</td>
                      <td>{app.ssoGroupId ?? <span class="muted">—</span>}</td>
                    </tr>
                  )}
                </For>
              </tbody>
            </table>
          </Show>
        )}
      </Async>
    </>
  );
}

const TYPES: { value: ClientType; title: string; text: string }[] = [
  { value: 'web', title: 'Web app with a backend', text: 'Server-rendered or with its own API server. Gets a client secret.' },
  { value: 'spa', title: 'Single-page app', text: 'Runs entirely in the browser. Public client, PKCE only.' },
  { value: 'native', title: 'Desktop or mobile app', text: 'Public client; loopback redirect URIs match on any port.' },
];

export function slugify(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
}

/** A sensible default audience: the redirect URI's origin + /api, else a URN with the id. */
export function suggestAudience(id: string, firstRedirect: string | undefined): string {
  try {
    const url = new URL(firstRedirect ?? '');
    if (url.protocol === 'http:' || url.protocol === 'https:') return `${url.origin}/api`;
  } catch {
    // not a URL yet
  }
  return `urn:gatehouse:${id || 'app'}`;
}

export function NewApplicationPage() {
  const navigate = useNavigate();
  const [step, setStep] = createSignal(1);
  const [name, setName] = createSignal('');
  const [id, setId] = createSignal('');
  const [idTouched, setIdTouched] = createSignal(false);
  const [type, setType] = createSignal<ClientType>('web');
  const [redirects, setRedirects] = createSignal('');
  const [audience, setAudience] = createSignal('');
  const [audienceTouched, setAudienceTouched] = createSignal(false);
  const [created, setCreated] = createSignal<Application | null>(null);
  const action = useAction();

  const effectiveId = () => (idTouched() ? id() : slugify(name()));
  const redirectList = createMemo(() =>
    redirects()
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const effectiveAudience = () => (audienceTouched() ? audience() : suggestAudience(effectiveId(), redirectList()[0]));

  const create = async (e: Event) => {
    e.preventDefault();
    const app = await action.run(() =>
      api.post<Application>('/api/admin/applications', {
        id: effectiveId(),
        name: name().trim(),
        clientType: type(),
        redirectUris: redirectList(),
        audience: effectiveAudience().trim(),
      }),
    );
    if (app) {
      setCreated(app);
      setStep(3);
    }
  };

  return (
    <>
      <h1>New application</h1>
      <ol class="steps" aria-label="Steps">
        <li class={step() === 1 ? 'on' : ''}>1. Name and type</li>
        <li class={step() === 2 ? 'on' : ''}>2. Redirect URIs and audience</li>
        <li class={step() === 3 ? 'on' : ''}>3. Hand over</li>
      </ol>
      <Switch>
        <Match when={step() === 1}>
          <form
            class="card"
            onSubmit={(e) => {
              e.preventDefault();
              setStep(2);
            }}
          >
            <label class="field">
              <span>Name</span>
              <input name="name" value={name()} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} autofocus />
            </label>
            <label class="field">
              <span>Client ID</span>
              <input
                name="id"
                value={effectiveId()}
                pattern="[a-z0-9][a-z0-9_\-]{1,62}"
                onInput={(e) => {
                  // Read the value before the signal update re-renders the input.
                  setId(e.currentTarget.value);
                  setIdTouched(true);
                }}
                required
              />
              <span class="hint">Lower-case letters, digits, - and _. Used in URLs and as the OAuth client_id; it cannot change later.</span>
            </label>
            <fieldset class="card">
              <legend>Type</legend>
              <For each={TYPES}>
                {(t) => (
                  <label class="check">
                    <input type="radio" name="clientType" value={t.value} checked={type() === t.value} onChange={() => setType(t.value)} />
                    <span>
                      <strong>{t.title}</strong> <span class="hint">({t.value}) {t.text}</span>
                    </span>
                  </label>
                )}
              </For>
            </fieldset>
            <div class="actions">
              <A class="button" href="/applications">
                Cancel
              </A>
              <button class="primary" type="submit">
                Next
              </button>
            </div>
          </form>
        </Match>
        <Match when={step() === 2}>
          <form class="card" onSubmit={create}>
            <label class="field">
              <span>Redirect URIs</span>
              <textarea
                name="redirectUris"
                value={redirects()}
                onInput={(e) => setRedirects(e.currentTarget.value)}
                placeholder="https://notes.example.com/auth/callback"
                required
                autofocus
              />
              <span class="hint">
                One per line. https, or http for localhost and private-network hosts
                {type() === 'native' ? '; custom schemes are allowed for desktop/mobile apps' : ''}.
              </span>
            </label>
            <label class="field">
              <span>Audience</span>
              <input
                name="audience"
                value={effectiveAudience()}
                onInput={(e) => {
                  setAudience(e.currentTarget.value);
                  setAudienceTouched(true);
                }}
                required
              />
              <span class="hint">The aud claim of this app's access tokens; its backend checks it. Suggested from the first redirect URI.</span>
            </label>
            <ErrorBox error={action.error()} />
            <div class="actions">
              <button type="button" onClick={() => setStep(1)}>
                Back
              </button>
              <button class="primary" type="submit" disabled={action.busy()}>
                {action.busy() ? 'Creating…' : 'Create application'}
              </button>
            </div>
          </form>
        </Match>
        <Match when={step() === 3 && created()}>
          {(app) => (
            <>
              <Show when={app().clientSecret}>
                {(secret) => (
                  <div class="notice" role="alert">
                    <strong>Client secret — shown only now.</strong> Copy it into the app's backend configuration; Gatehouse
                    keeps only a hash. You can rotate it later from the application's settings.
                    <CopyField label="Client secret" value={secret()} secret />
                  </div>
                )}
              </Show>
              <IntegrationSnippet app={app()} />
              <div class="actions">
                <button class="primary" type="button" onClick={() => navigate(`/applications/${encodeURIComponent(app().id)}`)}>
                  Done — open {app().name}
                </button>
              </div>
            </>
          )}
        </Match>
      </Switch>
    </>
  );
}
