import { createSignal, For, Show } from 'solid-js';
import { client, fieldErrors, ok, type ApiKey, type Application, type CreatedApiKey } from '../../api';
import { createPagedList, LoadMore, page, PAGE } from '../../paged';
import { Async, confirmAction, CopyField, ErrorBox, Field, toast, useAction, when, ListTable } from '../../ui';
import { requiredText } from '../../validate';

const t = {
  name: 'Key name',
  theName: 'The key name',
  scopes: 'Scopes',
  noScope: 'Choose at least one scope.',
  writeLimits:
    'application:write edits the name and the sign-in policy. Where sign-ins are sent (redirect URIs, post-logout redirect URIs), ' +
    'the token audience, the client type, the shared sign-in and deleting the application need the admin token; webhook settings need webhooks:write.',
  create: 'Create API key',
  shownOnce: (name: string) => `API key “${name}” — shown only now.`,
  usage: [' Use it as ', 'Authorization: Bearer <key>', " on this application's admin API."] as const,
  keyLabel: 'API key',
  table: 'API keys',
  columns: ['Name', 'Prefix', 'Scopes', 'Created', 'Last used', ''],
  empty: 'No API keys. Create one to let a script manage this application.',
  revoke: 'Revoke',
  revokeTitle: (name: string) => `Revoke the key “${name}”?`,
  revokeText: 'Anything using it gets 401 from now on.',
  revoked: (name: string) => `Key ${name} revoked.`,
};

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
  const path = { id: props.app.id };
  const keys = createPagedList(
    () => path.id,
    (_, cursor) => ok(client.GET('/api/admin/applications/{id}/api-keys', { params: { path, query: { limit: PAGE, cursor } } })).then((d) => page(d.apiKeys, d)),
  );
  const refetch = keys.refetch;
  const [name, setName] = createSignal('');
  const [nameTouched, setNameTouched] = createSignal(false);
  const [scopes, setScopes] = createSignal<string[]>(['users:read']);
  const [created, setCreated] = createSignal<CreatedApiKey | null>(null);
  const create = useAction();
  const row = useAction();
  const server = () => fieldErrors(create.error());
  const nameErrors = () => [...(nameTouched() ? requiredText(name(), t.theName) : []), ...(server().name ?? [])];
  const scopeErrors = () => [...(scopes().length ? [] : [t.noScope]), ...(server().scopes ?? [])];

  const submit = async (e: Event) => {
    e.preventDefault();
    setNameTouched(true);
    if (requiredText(name(), t.theName).length || !scopes().length) return;
    const key = await create.run(() => ok(client.POST('/api/admin/applications/{id}/api-keys', { params: { path }, body: { name: name().trim(), scopes: scopes() } })));
    if (key) {
      setCreated(key);
      setName('');
      setNameTouched(false);
      void refetch();
    }
  };
  const revoke = async (k: ApiKey) => {
    if (!(await confirmAction(t.revokeTitle(k.name), t.revokeText, t.revoke))) return;
    const done = await row.run(async () => (await ok(client.DELETE('/api/admin/applications/{id}/api-keys/{kid}', { params: { path: { ...path, kid: k.id } } })), true));
    if (done) {
      toast(t.revoked(k.name));
      void refetch();
    }
  };

  return (
    <>
      <form class="card" novalidate onSubmit={submit}>
        <Field label={t.name} errors={nameErrors()}>
          {(a) => (
            <input
              {...a}
              name="keyName"
              value={name()}
              onInput={(e) => {
                setName(e.currentTarget.value);
                setNameTouched(true);
              }}
              maxLength={200}
              placeholder="CI provisioning"
            />
          )}
        </Field>
        <fieldset aria-describedby="scope-errors">
          <legend>{t.scopes}</legend>
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
          <div id="scope-errors" class="field-errors" aria-live="polite">
            <For each={scopeErrors()}>{(m) => <p>{m}</p>}</For>
          </div>
          <p class="hint">{t.writeLimits}</p>
        </fieldset>
        <ErrorBox error={create.error()} fieldsShown />
        <div class="actions">
          <button class="primary" type="submit" disabled={create.busy() || !scopes().length}>
            {t.create}
          </button>
        </div>
      </form>
      <Show when={created()?.key}>
        {(key) => (
          <div class="notice" role="alert">
            <strong>{t.shownOnce(created()!.name)}</strong>
            {t.usage[0]}
            <code>{t.usage[1]}</code>
            {t.usage[2]}
            <CopyField label={t.keyLabel} value={key()} secret />
          </div>
        )}
      </Show>
      <ErrorBox error={row.error()} />
      <Async resource={keys.first}>
        {() => (
          <ListTable label={t.table} rows={keys.rows()} columns={t.columns} empty={<>{t.empty}</>}>
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
                  <button type="button" class="small danger" onClick={() => revoke(k)}>
                    {t.revoke}
                  </button>
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
