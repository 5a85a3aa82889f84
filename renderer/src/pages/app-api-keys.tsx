import { createSignal, For, Show } from 'solid-js';
import { api, enc, type ApiKey, type Application } from '../api';
import { createPagedList, LoadMore } from '../paged';
import { Async, confirmAction, CopyField, ErrorBox, toast, useAction, when, ListTable } from '../ui';

export const SCOPES = [
  'application:read',
  'application:write',
  'users:read',
  'users:write',
  'invitations:read',
  'invitations:write',
  'webhooks:read',
  'webhooks:write',
];

export function ApiKeysTab(props: { app: Application }) {
  const base = `/api/admin/applications/${enc(props.app.id)}/api-keys`;
  const keys = createPagedList<ApiKey>(() => base);
  const refetch = keys.refetch;
  const [name, setName] = createSignal('');
  const [scopes, setScopes] = createSignal<string[]>(['users:read']);
  const [created, setCreated] = createSignal<ApiKey | null>(null);
  const create = useAction();
  const row = useAction();

  const submit = async (e: Event) => {
    e.preventDefault();
    const key = await create.run(() => api.post<ApiKey>(base, { name: name().trim(), scopes: scopes() }));
    if (key) {
      setCreated(key);
      setName('');
      void refetch();
    }
  };
  const revoke = async (k: ApiKey) => {
    if (!(await confirmAction(`Revoke the key “${k.name}”?`, 'Anything using it gets 401 from now on.', 'Revoke'))) return;
    const ok = await row.run(async () => (await api.del(`${base}/${enc(k.id)}`), true));
    if (ok) {
      toast(`Key ${k.name} revoked.`);
      void refetch();
    }
  };

  return (
    <>
      <form class="card" onSubmit={submit}>
        <label class="field">
          <span>Key name</span>
          <input name="keyName" value={name()} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} placeholder="CI provisioning" />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          <div class="grid">
            <For each={SCOPES}>
              {(s) => (
                <label class="check">
                  <input
                    type="checkbox"
                    name={`scope-${s}`}
                    checked={scopes().includes(s)}
                    onChange={(e) => setScopes((all) => (e.currentTarget.checked ? [...all, s] : all.filter((x) => x !== s)))}
                  />
                  <code>{s}</code>
                </label>
              )}
            </For>
          </div>
          <p class="hint">
            <code>application:write</code> edits the name and the sign-in policy. Where sign-ins are sent (redirect URIs,
            post-logout redirect URIs), the token audience, the client type, the SSO group and deleting the application
            need the admin token; webhook settings need <code>webhooks:write</code>.
          </p>
        </fieldset>
        <ErrorBox error={create.error()} />
        <div class="actions">
          <button class="primary" type="submit" disabled={create.busy() || !scopes().length}>
            Create API key
          </button>
        </div>
      </form>
      <Show when={created()?.key}>
        {(key) => (
          <div class="notice" role="alert">
            <strong>API key “{created()!.name}” — shown only now.</strong> Use it as <code>Authorization: Bearer &lt;key&gt;</code> on this
            application's admin API.
            <CopyField label="API key" value={key()} secret />
          </div>
        )}
      </Show>
      <ErrorBox error={row.error()} />
      <Async resource={keys.first}>
        {() => (
          <ListTable rows={keys.rows()} columns={['Name', 'Prefix', 'Scopes', 'Created', 'Last used', '']} empty={<>No API keys. Create one to let a script manage this application.</>}>
            {(k) => (
              <tr data-api-key={k.name}>
                <td>{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>{k.scopes.join(', ')}</td>
                <td>{when(k.createdAt)}</td>
                <td>{when(k.lastUsedAt)}</td>
                <td>
                  <Show when={!k.revokedAt} fallback={<span class="badge bad">revoked</span>}>
                    <button type="button" class="small danger" onClick={() => revoke(k)}>
                      Revoke
                    </button>
                  </Show>
                </td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
      <LoadMore list={keys} />
    </>
  );
}
