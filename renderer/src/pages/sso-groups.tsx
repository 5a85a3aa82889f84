import { createResource, createSignal, For, Show } from 'solid-js';
import { A } from '@solidjs/router';
import { api, enc, type Application, type SsoGroup } from '../api';
import { fetchAll } from '../paged';
import { Async, confirmAction, Empty, ErrorBox, toast, useAction } from '../ui';
import { slugify } from './applications';

export function SsoGroupsPage() {
  const [data, { refetch }] = createResource(async () => {
    const [groups, apps] = await Promise.all([
      fetchAll<SsoGroup>('/api/admin/sso-groups'),
      fetchAll<Application>('/api/admin/applications'),
    ]);
    return { groups, apps };
  });
  const [name, setName] = createSignal('');
  const action = useAction();
  const appName = (id: string) => data.latest?.apps.find((a) => a.id === id)?.name ?? id;

  const create = async (e: Event) => {
    e.preventDefault();
    const g = await action.run(() => api.post<SsoGroup>('/api/admin/sso-groups', { id: slugify(name()), name: name().trim() }));
    if (g) {
      setName('');
      toast(`Group ${g.name} created.`);
      void refetch();
    }
  };
  const add = async (group: SsoGroup, appId: string) => {
    if (!appId) return;
    const r = await action.run(() => api.post(`/api/admin/sso-groups/${enc(group.id)}/apps`, { appId }));
    if (r !== undefined) {
      toast(`${appName(appId)} now shares sign-in with ${group.name}.`);
      void refetch();
    }
  };
  const removeApp = async (group: SsoGroup, appId: string) => {
    if (!(await confirmAction(`Take ${appName(appId)} out of ${group.name}?`, 'People will have to sign in to it separately.', 'Remove'))) return;
    const ok = await action.run(async () => (await api.del(`/api/admin/sso-groups/${enc(group.id)}/apps/${enc(appId)}`), true));
    if (ok) void refetch();
  };
  const removeGroup = async (group: SsoGroup) => {
    if (!(await confirmAction(`Delete the group ${group.name}?`, 'Its applications stay, but no longer share sign-in.'))) return;
    const ok = await action.run(async () => (await api.del(`/api/admin/sso-groups/${enc(group.id)}`), true));
    if (ok) void refetch();
  };

  return (
    <>
      <h1>SSO groups</h1>
      <p class="muted">Applications in one group share sign-in: signing in to one signs the person in to the others on the same device.</p>
      <form class="card row" onSubmit={create}>
        <label>
          New group{' '}
          <input name="groupName" value={name()} onInput={(e) => setName(e.currentTarget.value)} placeholder="Office apps" required />
        </label>
        <button class="primary" type="submit" disabled={action.busy() || slugify(name()).length < 2}>
          Create group
        </button>
      </form>
      <ErrorBox error={action.error()} />
      <Async resource={data}>
        {({ groups, apps }) => (
          <Show when={groups.length} fallback={<Empty>No SSO groups. Every application has its own sign-in.</Empty>}>
            <For each={groups}>
              {(g) => (
                <section class="card" data-group={g.id} aria-label={`Group ${g.name}`}>
                  <div class="row" style={{ 'justify-content': 'space-between' }}>
                    <h2>
                      {g.name} <code>{g.id}</code>
                    </h2>
                    <button type="button" class="small danger" onClick={() => removeGroup(g)}>
                      Delete group
                    </button>
                  </div>
                  <Show when={g.applicationIds.length} fallback={<p class="muted">No applications yet.</p>}>
                    <ul>
                      <For each={g.applicationIds}>
                        {(id) => (
                          <li>
                            <A href={`/applications/${enc(id)}`}>{appName(id)}</A>{' '}
                            <button type="button" class="small" onClick={() => removeApp(g, id)}>
                              Remove
                            </button>
                          </li>
                        )}
                      </For>
                    </ul>
                  </Show>
                  <label>
                    Add application{' '}
                    <select aria-label={`Add application to ${g.name}`} value="" onChange={(e) => void add(g, e.currentTarget.value)}>
                      <option value="">Choose…</option>
                      <For each={apps.filter((a) => a.ssoGroupId !== g.id)}>
                        {(a) => (
                          <option value={a.id}>
                            {a.name}
                            {a.ssoGroupId ? ` (moves from ${a.ssoGroupId})` : ''}
                          </option>
                        )}
                      </For>
                    </select>
                  </label>
                </section>
              )}
            </For>
          </Show>
        )}
      </Async>
    </>
  );
}
