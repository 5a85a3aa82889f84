import { createMemo, createResource, createSignal, For, Match, Show, Switch } from 'solid-js';
import { A, useNavigate } from '@solidjs/router';
import { isOwner } from '../../me';
import { client, fieldErrors, ok, type ClientType, type CreatedApplication, type PresetSummary } from '../../api';
import { fetchAll, page, PAGE } from '../../paged';
import { Async, CopyField, DataTable, Empty, ErrorBox, Field, useAction } from '../../ui';
import { redirectUriHint, audienceErrors, clientIdErrors, redirectUriErrors, redirectUriList, requiredText } from '../../validate';
import { IntegrationSnippet } from './snippet';
import { PresetInputsForm, PresetPicker, SetupView } from './presets';
import { idFromName } from '../../../../server/applications/id-from-name';

const t = {
  title: 'Applications',
  new: 'New application',
  empty: 'No applications yet.',
  createFirst: 'Create the first one',
  emptyTail: ' to let an app sign people in.',
  table: 'Applications',
  columns: ['Name', 'Client ID', 'Type', 'Audience', 'Sign-up', 'Shared sign-in'],
  signup: { open: 'open', invite_only: 'invitation only', closed: 'closed' } as Record<string, string>,
  types: [
    { value: 'web', title: 'Web app with a backend', text: 'Server-rendered or with its own API server. Gets a client secret.' },
    { value: 'spa', title: 'Single-page app', text: 'Runs entirely in the browser. Public client, PKCE only.' },
    { value: 'native', title: 'Desktop or mobile app', text: 'Public client; loopback redirect URIs match on any port.' },
  ] as { value: ClientType; title: string; text: string }[],
  steps: ['1. What are you connecting?', '2. Name and type', '3. Redirect URIs and audience', '4. Hand over'],
  presetSteps: ['1. What are you connecting?', '2. Its settings', '3. Set up the app'],
  stepsLabel: 'Steps',
  name: 'Name',
  theName: 'The name',
  clientId: 'Client ID',
  clientIdHint: 'Lower-case letters, digits, - and _. Used in URLs and as the OAuth client_id; it cannot change later.',
  type: 'Type',
  cancel: 'Cancel',
  next: 'Next',
  back: 'Back',
  redirects: 'Redirect URIs',
  audience: 'Audience',
  audienceHint: "The aud claim of this app's access tokens; its backend checks it. Suggested from the first redirect URI.",
  creating: 'Creating…',
  create: 'Create application',
  fixFirst: 'Fix the fields marked above first.',
  secretTitle: 'Client secret — shown only now.',
  secretText: " Copy it into the app's backend configuration; Gatehouse keeps only a hash. You can rotate it later from the application's settings.",
  clientSecret: 'Client secret',
  done: (name: string) => `Done — open ${name}`,
  testSignIn: 'Next: Test sign-in',
  checking: 'Checking…',
  idTaken: (id: string) => `An application with id "${id}" already exists; choose another client ID.`,
};

/** Whether an application has this id already (checked on step 1, before anything else is typed). */
async function idTaken(id: string): Promise<boolean> {
  const call = client.GET('/api/admin/applications/{id}', { params: { path: { id } } });
  if ((await call).response.status === 404) return false;
  await ok(call); // another refusal (an expired token, a server error) is shown as such
  return true;
}

/** Every application, read to the end (a panel needs them all for pickers and names). */
export const allApplications = () =>
  fetchAll((cursor) => ok(client.GET('/api/admin/applications', { params: { query: { limit: PAGE, cursor } } })).then((d) => page(d.applications, d)));

export function ApplicationsPage() {
  const [apps] = createResource(allApplications);
  return (
    <>
      <div class="row title-row">
        <h1>{t.title}</h1>
        {/* Only owners create applications (server/http/admin-policy.ts). */}
        <Show when={isOwner()}>
          <A class="button primary" href="/applications/new">
            {t.new}
          </A>
        </Show>
      </div>
      <Async resource={apps}>
        {(list) => (
          <Show
            when={list.length}
            fallback={
              <Empty>
                {t.empty} <A href="/applications/new">{t.createFirst}</A>
                {t.emptyTail}
              </Empty>
            }
          >
            <DataTable label={t.table} columns={t.columns} rows={list}>
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
                  <td>{t.signup[app.authPolicy.signup_policy] ?? app.authPolicy.signup_policy}</td>
                  <td>{app.ssoGroupId ?? <span class="muted">—</span>}</td>
                </tr>
              )}
            </DataTable>
          </Show>
        )}
      </Async>
    </>
  );
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
  // Step 0 asks what is being connected: a preset (its inputs, then its set-up page) or "Something else" (steps 1–3).
  const [step, setStep] = createSignal(0);
  const [presets] = createResource(() => ok(client.GET('/api/admin/presets')).then((d) => d.presets));
  const [preset, setPreset] = createSignal<PresetSummary | null>(null);
  const [fromPreset, setFromPreset] = createSignal<CreatedApplication | null>(null);
  const [name, setName] = createSignal('');
  const [id, setId] = createSignal('');
  const [idTouched, setIdTouched] = createSignal(false);
  const [type, setType] = createSignal<ClientType>('web');
  const [redirects, setRedirects] = createSignal('');
  const [audience, setAudience] = createSignal('');
  const [audienceTouched, setAudienceTouched] = createSignal(false);
  const [created, setCreated] = createSignal<CreatedApplication | null>(null);
  // The client ids found taken on step 1 (the field says so until another is typed).
  const [taken, setTaken] = createSignal<string[]>([]);
  const check = useAction();
  // Messages show once a field has been typed in (or a step was submitted), not on an empty form.
  const [shown, setShown] = createSignal<Record<string, boolean>>({});
  const show = (...fields: string[]) => setShown((s) => ({ ...s, ...Object.fromEntries(fields.map((f) => [f, true])) }));
  const action = useAction();

  const effectiveId = () => (idTouched() ? id() : idFromName(name()));
  const redirectList = createMemo(() => redirectUriList(redirects()));
  const effectiveAudience = () => (audienceTouched() ? audience() : suggestAudience(effectiveId(), redirectList()[0]));
  const server = () => fieldErrors(action.error());
  const errors = {
    name: () => (shown().name ? requiredText(name(), t.theName) : []),
    id: () => [...(shown().id ? clientIdErrors(effectiveId()) : []), ...(taken().includes(effectiveId()) ? [t.idTaken(effectiveId())] : []), ...(server().id ?? [])],
    redirects: () => [...(shown().redirects ? redirectUriErrors(redirects(), type()) : []), ...(server().redirectUris ?? [])],
    audience: () => [...(shown().audience ? audienceErrors(effectiveAudience()) : []), ...(server().audience ?? [])],
  };
  const stepOneOk = () => !requiredText(name(), t.theName).length && !clientIdErrors(effectiveId()).length;
  const stepTwoOk = () => !redirectUriErrors(redirects(), type()).length && !audienceErrors(effectiveAudience()).length;

  const create = async (e: Event) => {
    e.preventDefault();
    show('redirects', 'audience');
    if (!stepTwoOk()) {
      action.setError(null); // an earlier server answer no longer applies
      return;
    }
    const app = await action.run(() =>
      ok(
        client.POST('/api/admin/applications', {
          body: {
            id: effectiveId(),
            name: name().trim(),
            clientType: type(),
            redirectUris: redirectList(),
            audience: effectiveAudience().trim(),
          },
        }),
      ),
    );
    if (app) {
      setCreated(app);
      setStep(3);
    }
  };

  return (
    <>
      <h1>{t.new}</h1>
      <ol class="steps" aria-label={t.stepsLabel}>
        <Show
          when={preset()}
          fallback={<For each={t.steps}>{(label, i) => <li class={step() === i() ? 'on' : ''}>{label}</li>}</For>}
        >
          <For each={t.presetSteps}>{(label, i) => <li class={(fromPreset() ? 2 : preset() ? 1 : 0) === i() ? 'on' : ''}>{label}</li>}</For>
        </Show>
      </ol>
      <Switch>
        <Match when={step() === 0 && !preset()}>
          <Async resource={presets}>
            {(list) => <PresetPicker presets={list} onPick={(p) => setPreset(p)} onSomethingElse={() => setStep(1)} />}
          </Async>
        </Match>
        <Match when={step() === 0 && !fromPreset() && preset()}>
          {(chosen) => <PresetInputsForm preset={chosen()} onBack={() => setPreset(null)} onCreated={(app) => setFromPreset(app)} />}
        </Match>
        <Match when={fromPreset()}>
          {(app) => (
            <>
              <SetupView appId={app().id} secrets={app()} />
              <div class="actions">
                <button type="button" onClick={() => navigate(`/applications/${encodeURIComponent(app().id)}`)}>
                  {t.done(app().name)}
                </button>
                <Show when={preset()?.protocol === 'oidc'}>
                  <button class="primary" type="button" onClick={() => navigate(`/applications/${encodeURIComponent(app().id)}/test`)}>
                    {t.testSignIn}
                  </button>
                </Show>
              </div>
            </>
          )}
        </Match>
        <Match when={step() === 1}>
          <form
            class="card"
            novalidate
            onSubmit={async (e) => {
              e.preventDefault();
              show('name', 'id');
              if (!stepOneOk()) return;
              const id = effectiveId();
              const exists = await check.run(() => idTaken(id));
              if (exists === undefined) return;
              if (exists) setTaken((list) => [...list, id]);
              else setStep(2);
            }}
          >
            <Field label={t.name} errors={errors.name()}>
              {(a) => (
                <input
                  {...a}
                  name="name"
                  value={name()}
                  onInput={(e) => {
                    setName(e.currentTarget.value);
                    show('name');
                    if (!idTouched()) show('id');
                  }}
                  maxLength={200}
                  autofocus
                />
              )}
            </Field>
            <Field label={t.clientId} hint={t.clientIdHint} errors={errors.id()}>
              {(a) => (
                <input
                  {...a}
                  name="id"
                  value={effectiveId()}
                  onInput={(e) => {
                    // Read the value before the signal update re-renders the input.
                    setId(e.currentTarget.value);
                    setIdTouched(true);
                    show('id');
                  }}
                />
              )}
            </Field>
            <fieldset class="card">
              <legend>{t.type}</legend>
              <For each={t.types}>
                {(ct) => (
                  <label class="check">
                    <input type="radio" name="clientType" value={ct.value} checked={type() === ct.value} onChange={() => setType(ct.value)} />
                    <span>
                      <strong>{ct.title}</strong> <span class="hint">({ct.value}) {ct.text}</span>
                    </span>
                  </label>
                )}
              </For>
            </fieldset>
            <ErrorBox error={check.error()} />
            <div class="actions">
              <button type="button" onClick={() => setStep(0)}>
                {t.back}
              </button>
              <A class="button" href="/applications">
                {t.cancel}
              </A>
              <button class="primary" type="submit" disabled={check.busy()}>
                {check.busy() ? t.checking : t.next}
              </button>
            </div>
          </form>
        </Match>
        <Match when={step() === 2}>
          <form class="card" novalidate onSubmit={create}>
            <Field label={t.redirects} hint={redirectUriHint(type() === 'native')} errors={errors.redirects()}>
              {(a) => (
                <textarea
                  {...a}
                  name="redirectUris"
                  value={redirects()}
                  onInput={(e) => {
                    setRedirects(e.currentTarget.value);
                    show('redirects');
                  }}
                  placeholder="https://notes.example.com/auth/callback"
                  autofocus
                />
              )}
            </Field>
            <Field label={t.audience} hint={t.audienceHint} errors={errors.audience()}>
              {(a) => (
                <input
                  {...a}
                  name="audience"
                  value={effectiveAudience()}
                  onInput={(e) => {
                    setAudience(e.currentTarget.value);
                    setAudienceTouched(true);
                    show('audience');
                  }}
                />
              )}
            </Field>
            <ErrorBox error={action.error()} fieldsShown />
            <div class="actions">
              <button type="button" onClick={() => setStep(1)}>
                {t.back}
              </button>
              <button class="primary" type="submit" disabled={action.busy()}>
                {action.busy() ? t.creating : t.create}
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
                    <strong>{t.secretTitle}</strong>
                    {t.secretText}
                    <CopyField label={t.clientSecret} value={secret()} secret />
                  </div>
                )}
              </Show>
              <IntegrationSnippet app={app()} clientSecret={app().clientSecret ?? undefined} />
              <div class="actions">
                <button type="button" onClick={() => navigate(`/applications/${encodeURIComponent(app().id)}`)}>
                  {t.done(app().name)}
                </button>
                <button class="primary" type="button" onClick={() => navigate(`/applications/${encodeURIComponent(app().id)}/test`)}>
                  {t.testSignIn}
                </button>
              </div>
            </>
          )}
        </Match>
      </Switch>
    </>
  );
}

