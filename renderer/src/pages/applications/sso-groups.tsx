import { createResource, createSignal, For, Show } from 'solid-js';
import { A } from '@solidjs/router';
import { client, enc, fieldErrors, ok, type SsoGroup } from '../../api';
import { fetchAll, page, PAGE } from '../../paged';
import { Async, confirmAction, Empty, ErrorBox, Field, toast, useAction } from '../../ui';
import { idFromName } from '../../../../server/applications/id-from-name';
import { allApplications } from './list';

const t = {
  title: 'Shared sign-in',
  intro:
    'Applications in one shared sign-in share it: signing in to one signs the person in to the others on the same device. (Who is in which team is under Groups.)',
  newGroup: 'New shared sign-in',
  newGroupHint: 'A name such as “Office apps”; its id is made from it.',
  nameTooShort: 'Use at least two letters or digits in the name.',
  create: 'Create shared sign-in',
  created: (name: string) => `Shared sign-in ${name} created.`,
  empty: 'No shared sign-in. Every application has its own sign-in.',
  group: (name: string) => `Shared sign-in ${name}`,
  deleteGroup: 'Delete shared sign-in',
  deleteTitle: (name: string) => `Delete the shared sign-in ${name}?`,
  deleteText: 'Its applications stay, but no longer share sign-in.',
  noApps: 'No applications yet.',
  remove: 'Remove',
  removeTitle: (app: string, group: string) => `Take ${app} out of ${group}?`,
  removeText: 'People will have to sign in to it separately.',
  added: (app: string, group: string) => `${app} now shares sign-in with ${group}.`,
  add: 'Add application',
  addTo: (group: string) => `Add application to ${group}`,
  choose: 'Choose…',
  moves: (from: string) => ` (moves from ${from})`,
};

export function SsoGroupsPage() {
  const [data, { refetch }] = createResource(async () => {
    const [groups, apps] = await Promise.all([
      fetchAll((cursor) => ok(client.GET('/api/admin/sso-groups', { params: { query: { limit: PAGE, cursor } } })).then((d) => page(d.ssoGroups, d))),
      allApplications(),
    ]);
    return { groups, apps };
  });
  const [name, setName] = createSignal('');
  const [touched, setTouched] = createSignal(false);
  const action = useAction();
  const appName = (id: string) => data.latest?.apps.find((a) => a.id === id)?.name ?? id;
  const nameErrors = () => [...(touched() && idFromName(name()).length < 2 ? [t.nameTooShort] : []), ...(fieldErrors(action.error()).name ?? [])];

  const create = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (idFromName(name()).length < 2) return;
    const g = await action.run(() => ok(client.POST('/api/admin/sso-groups', { body: { id: idFromName(name()), name: name().trim() } })));
    if (g) {
      setName('');
      setTouched(false);
      toast(t.created(g.name));
      void refetch();
    }
  };
  const add = async (group: SsoGroup, appId: string) => {
    if (!appId) return;
    const r = await action.run(() => ok(client.POST('/api/admin/sso-groups/{id}/apps', { params: { path: { id: group.id } }, body: { appId } })));
    if (r !== undefined) {
      toast(t.added(appName(appId), group.name));
      void refetch();
    }
  };
  const removeApp = async (group: SsoGroup, appId: string) => {
    if (!(await confirmAction(t.removeTitle(appName(appId), group.name), t.removeText, t.remove))) return;
    const done = await action.run(async () => (await ok(client.DELETE('/api/admin/sso-groups/{id}/apps/{appId}', { params: { path: { id: group.id, appId } } })), true));
    if (done) void refetch();
  };
  const removeGroup = async (group: SsoGroup) => {
    if (!(await confirmAction(t.deleteTitle(group.name), t.deleteText))) return;
    const done = await action.run(async () => (await ok(client.DELETE('/api/admin/sso-groups/{id}', { params: { path: { id: group.id } } })), true));
    if (done) void refetch();
  };

  return (
    <>
      <h1>{t.title}</h1>
      <p class="muted">{t.intro}</p>
      <form class="card" novalidate onSubmit={create}>
        <Field label={t.newGroup} hint={t.newGroupHint} errors={nameErrors()}>
          {(a) => (
            <input
              {...a}
              name="groupName"
              value={name()}
              onInput={(e) => {
                setName(e.currentTarget.value);
                setTouched(true);
              }}
              placeholder="Office apps"
            />
          )}
        </Field>
        <button class="primary" type="submit" disabled={action.busy() || idFromName(name()).length < 2}>
          {t.create}
        </button>
      </form>
      <ErrorBox error={action.error()} fieldsShown />
      <Async resource={data}>
        {({ groups, apps }) => (
          <Show when={groups.length} fallback={<Empty>{t.empty}</Empty>}>
            <For each={groups}>
              {(g) => (
                <section class="card" data-group={g.id} aria-label={t.group(g.name)}>
                  <div class="row title-row">
                    <h2>
                      {g.name} <code>{g.id}</code>
                    </h2>
                    <button type="button" class="small danger" onClick={() => removeGroup(g)}>
                      {t.deleteGroup}
                    </button>
                  </div>
                  <Show when={g.applicationIds.length} fallback={<p class="muted">{t.noApps}</p>}>
                    <ul>
                      <For each={g.applicationIds}>
                        {(id) => (
                          <li>
                            <A href={`/applications/${enc(id)}`}>{appName(id)}</A>{' '}
                            <button type="button" class="small" onClick={() => removeApp(g, id)}>
                              {t.remove}
                            </button>
                          </li>
                        )}
                      </For>
                    </ul>
                  </Show>
                  <label>
                    {t.add}{' '}
                    <select aria-label={t.addTo(g.name)} value="" onChange={(e) => void add(g, e.currentTarget.value)}>
                      <option value="">{t.choose}</option>
                      <For each={apps.filter((a) => a.ssoGroupId !== g.id)}>
                        {(a) => (
                          <option value={a.id}>
                            {a.name}
                            {a.ssoGroupId ? t.moves(a.ssoGroupId) : ''}
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
