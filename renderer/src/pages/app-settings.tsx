import { createResource, createSignal, For, Show } from 'solid-js';
import { A, useNavigate } from '@solidjs/router';
import { api, enc, type Application, type GrantType, type SsoGroup } from '../api';
import { GRANTS } from '../grants';
import { confirmAction, CopyField, ErrorBox, toast, useAction } from '../ui';
import { IntegrationSnippet } from './snippet';

export function SettingsTab(props: { app: Application; onSaved: (app: Application) => void }) {
  const navigate = useNavigate();
  const [name, setName] = createSignal(props.app.name);
  const [audience, setAudience] = createSignal(props.app.audience);
  const [redirects, setRedirects] = createSignal(props.app.redirectUris.join('\n'));
  const [grants, setGrants] = createSignal<GrantType[]>([...props.app.grantTypes]);
  const toggleGrant = (id: GrantType, on: boolean) => setGrants((g) => (on ? [...g.filter((x) => x !== id), id] : g.filter((x) => x !== id)));
  const [secret, setSecret] = createSignal<string | null>(null);
  const save = useAction();
  const danger = useAction();
  const [group] = createResource(
    () => props.app.ssoGroupId,
    (id) => api.get<SsoGroup>(`/api/admin/sso-groups/${enc(id)}`),
  );

  const submit = async (e: Event) => {
    e.preventDefault();
    const next = await save.run(() =>
      api.patch<Application>(`/api/admin/applications/${enc(props.app.id)}`, {
        name: name().trim(),
        audience: audience().trim(),
        redirectUris: redirects().split(/\s+/).filter(Boolean),
        // In the canonical order, so an unchanged set reads as unchanged.
        grantTypes: GRANTS.map((g) => g.id).filter((id) => grants().includes(id)),
      }),
    );
    if (next) {
      props.onSaved(next);
      toast('Settings saved.');
    }
  };
  const rotate = async () => {
    if (!(await confirmAction('Rotate the client secret?', 'The current secret stops working at once; the app needs the new one.', 'Rotate'))) return;
    const r = await danger.run(() => api.post<{ clientSecret: string }>(`/api/admin/applications/${enc(props.app.id)}/client-secret`));
    if (r) setSecret(r.clientSecret);
  };
  const remove = async () => {
    if (!(await confirmAction(`Delete ${props.app.name}?`, 'Its members, invitations, API keys and webhook history are deleted too. This cannot be undone.'))) return;
    const ok = await danger.run(async () => (await api.del(`/api/admin/applications/${enc(props.app.id)}`), true));
    if (ok) {
      toast(`${props.app.name} deleted.`);
      navigate('/applications');
    }
  };

  return (
    <>
      <form class="card" onSubmit={submit}>
        <label class="field">
          <span>Name</span>
          <input name="name" value={name()} onInput={(e) => setName(e.currentTarget.value)} required />
        </label>
        <label class="field">
          <span>Audience</span>
          <input name="audience" value={audience()} onInput={(e) => setAudience(e.currentTarget.value)} required />
        </label>
        <label class="field">
          <span>Redirect URIs (one per line)</span>
          <textarea name="redirectUris" value={redirects()} onInput={(e) => setRedirects(e.currentTarget.value)} />
        </label>
        <fieldset class="grants" data-testid="grant-types">
          <legend>How the app gets tokens</legend>
          <For each={GRANTS}>
            {(g) => {
              const unavailable = () => g.unavailable?.(props.app.clientType);
              return (
                <div class="grant">
                  <label class="check">
                    <input
                      type="checkbox"
                      name={`grant-${g.id}`}
                      checked={grants().includes(g.id)}
                      disabled={Boolean(unavailable()) && !grants().includes(g.id)}
                      onChange={(e) => toggleGrant(g.id, e.currentTarget.checked)}
                    />
                    {g.label}
                  </label>
                  <p class="hint">
                    {g.help}
                    <Show when={unavailable()}>{(why) => <> {why()}</>}</Show>
                  </p>
                </div>
              );
            }}
          </For>
        </fieldset>
        <p class="hint">Type: {props.app.clientType} · created {new Date(props.app.createdAt).toLocaleString()}</p>
        <p data-testid="sso-sharing">
          <Show when={group()} fallback={<span class="muted">Own sign-in (not in an SSO group).</span>}>
            {(g) => (
              <>
                Shares sign-in with{' '}
                <For each={g().applicationIds.filter((id) => id !== props.app.id)} fallback={<span class="muted">no other application yet</span>}>
                  {(id, i) => (
                    <>
                      {i() > 0 ? ', ' : ''}
                      <A href={`/applications/${enc(id)}`}>{id}</A>
                    </>
                  )}
                </For>{' '}
                through the SSO group <A href="/sso-groups">{g().name}</A>.
              </>
            )}
          </Show>
        </p>
        <ErrorBox error={save.error()} />
        <div class="actions">
          <button class="primary" type="submit" disabled={save.busy()}>
            Save settings
          </button>
        </div>
      </form>
      <h2>Integration</h2>
      <IntegrationSnippet app={props.app} />
      <h2>Danger zone</h2>
      <div class="card">
        <Show when={secret()}>
          {(s) => (
            <div class="notice">
              New client secret — shown only now.
              <CopyField label="Client secret" value={s()} secret />
            </div>
          )}
        </Show>
        <ErrorBox error={danger.error()} />
        <div class="row">
          <Show when={props.app.clientType === 'web'}>
            <button type="button" class="danger" onClick={rotate}>
              Rotate client secret
            </button>
          </Show>
          <button type="button" class="danger" onClick={remove}>
            Delete application
          </button>
        </div>
      </div>
    </>
  );
}
