/**
 * Directory groups (spec claims-and-groups.md, "Groups"): who a person is in the team. The list
 * (search by id, create), and one group's page (rename, describe, members in and out, delete,
 * with the reason in words when an application setting still names it).
 */
import { createResource, createSignal, For, Show } from 'solid-js';
import { A, useNavigate, useParams } from '@solidjs/router';
import { ApiError, client, enc, fieldErrors, ok, type Group, type GroupMember } from '../../api';
import { createPagedList, LoadMore, page, PAGE } from '../../paged';
import { Async, confirmAction, ErrorBox, Field, ListTable, Loading, toast, useAction, when } from '../../ui';
import { idFromName } from '../../../../server/applications/id-from-name';

const t = {
  title: 'Groups',
  intro:
    'Who is who in your team: admins, family, media-users. Applications that ask for the groups scope receive a person’s groups in their tokens, to give roles. (Applications that share one sign-in are under Shared sign-in.)',
  search: 'Search groups',
  searchPlaceholder: 'Group id, or its beginning',
  searchButton: 'Search',
  newGroup: 'New group',
  name: 'Name',
  nameHint: 'As people will read it, e.g. “Media users”.',
  id: 'Id',
  idHint: 'What applications see: lower-case letters, digits, “.”, “_” and “-”. It cannot change later.',
  description: 'Description (optional)',
  create: 'Create group',
  created: (name: string) => `Group ${name} created.`,
  table: 'Groups',
  columns: ['Group', 'Id', 'Description', 'Created'],
  empty: (q: string) => (q ? `No group id starts with “${q}”.` : 'No groups yet. Create the first one above.'),
  // One group's page.
  back: 'All groups',
  settings: 'Name and description',
  save: 'Save',
  saved: 'Group saved.',
  members: 'Members',
  membersTable: 'Members',
  memberColumns: ['Person', 'Username', 'Added', ''],
  noMembers: 'Nobody is in this group yet.',
  addMember: 'Add a person',
  addMemberForm: 'Add a person to this group',
  addMemberHint: 'Their e-mail address; matching people are suggested as you type.',
  addButton: 'Add to group',
  added: (email: string) => `${email} added.`,
  notFound: (email: string) => `Nobody has the e-mail address ${email}.`,
  remove: 'Remove',
  removeTitle: (who: string, group: string) => `Take ${who} out of ${group}?`,
  removeText: 'Applications see the change at the person’s next sign-in or token refresh.',
  removed: (who: string) => `${who} removed.`,
  danger: 'Delete',
  deleteButton: 'Delete group',
  deleteTitle: (name: string) => `Delete the group ${name}?`,
  deleteText: 'Its members stay, outside it. Applications stop seeing the group at the next sign-in or refresh.',
  deleted: (name: string) => `Group ${name} deleted.`,
  inUse: 'Remove the group from these application settings first:',
};

export function GroupsPage() {
  const [q, setQ] = createSignal('');
  const [search, setSearch] = createSignal('');
  const groups = createPagedList(search, (query, cursor) =>
    ok(client.GET('/api/admin/groups', { params: { query: { limit: PAGE, cursor, ...(query ? { q: query } : {}) } } })).then((d) => page(d.groups, d)),
  );
  const [name, setName] = createSignal('');
  const [id, setId] = createSignal('');
  const [idEdited, setIdEdited] = createSignal(false);
  const [description, setDescription] = createSignal('');
  const action = useAction();
  const groupId = () => (idEdited() ? id() : idFromName(name()));
  const errors = () => fieldErrors(action.error());

  const create = async (e: Event) => {
    e.preventDefault();
    const body = { id: groupId(), name: name().trim(), ...(description().trim() ? { description: description().trim() } : {}) };
    const g = await action.run(() => ok(client.POST('/api/admin/groups', { body })));
    if (g) {
      setName('');
      setId('');
      setIdEdited(false);
      setDescription('');
      toast(t.created(g.name));
      groups.refetch();
    }
  };

  return (
    <>
      <h1>{t.title}</h1>
      <p class="muted">{t.intro}</p>
      <form class="card" novalidate onSubmit={create} aria-label={t.newGroup}>
        <h2>{t.newGroup}</h2>
        <Field label={t.name} hint={t.nameHint} errors={errors().name}>
          {(a) => <input {...a} name="name" value={name()} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} placeholder="Media users" />}
        </Field>
        <Field label={t.id} hint={t.idHint} errors={errors().id}>
          {(a) => (
            <input
              {...a}
              name="id"
              value={groupId()}
              maxLength={64}
              onInput={(e) => {
                setId(e.currentTarget.value);
                setIdEdited(true);
              }}
            />
          )}
        </Field>
        <Field label={t.description} errors={errors().description}>
          {(a) => <input {...a} name="description" value={description()} maxLength={1000} onInput={(e) => setDescription(e.currentTarget.value)} />}
        </Field>
        <ErrorBox error={action.error()} fieldsShown />
        <div class="actions">
          <button class="primary" type="submit" disabled={action.busy() || !name().trim() || !groupId()}>
            {t.create}
          </button>
        </div>
      </form>
      <form class="row card" role="search" onSubmit={(e) => (e.preventDefault(), setSearch(q().trim().toLowerCase()))}>
        <input type="search" aria-label={t.search} placeholder={t.searchPlaceholder} value={q()} onInput={(e) => setQ(e.currentTarget.value)} />
        <button type="submit">{t.searchButton}</button>
      </form>
      <Async resource={groups.first}>
        {() => (
          <ListTable label={t.table} rows={groups.rows()} columns={t.columns} empty={<>{t.empty(search())}</>}>
            {(g) => (
              <tr data-group={g.id}>
                <td>
                  <A href={`/groups/${enc(g.id)}`}>{g.name}</A>
                </td>
                <td>
                  <code>{g.id}</code>
                </td>
                <td>{g.description ?? <span class="muted">—</span>}</td>
                <td>{when(g.createdAt)}</td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
      <LoadMore list={groups} />
    </>
  );
}

/** The applications and settings a `group_in_use` refusal names (`applications.<id>.<field>`). */
function namedBy(error: unknown): { applicationId: string; field: string }[] {
  if (!(error instanceof ApiError) || error.code !== 'group_in_use') return [];
  return (error.problem.errors ?? []).flatMap((e) => {
    const m = /^applications\.([^.]+)\.(.+)$/.exec(e.path);
    return m ? [{ applicationId: m[1]!, field: m[2]! }] : [];
  });
}

export function GroupPage() {
  const params = useParams<{ id: string }>();
  const navigate = useNavigate();
  const [group, { mutate }] = createResource(
    () => params.id,
    (id) => ok(client.GET('/api/admin/groups/{id}', { params: { path: { id } } })),
  );
  return (
    <Show when={!group.error} fallback={<><p><A href="/groups">{t.back}</A></p><ErrorBox error={group.error} /></>}>
      <Show when={group.latest} fallback={<Loading />}>
        {(g) => <GroupDetail group={g()} onSaved={(next) => mutate(next)} onDeleted={() => navigate('/groups')} />}
      </Show>
    </Show>
  );
}

function GroupDetail(props: { group: Group; onSaved: (g: Group) => void; onDeleted: () => void }) {
  const path = () => ({ id: props.group.id });
  const [name, setName] = createSignal(props.group.name);
  const [description, setDescription] = createSignal(props.group.description ?? '');
  const save = useAction();
  const members = createPagedList(
    () => props.group.id,
    (id, cursor) => ok(client.GET('/api/admin/groups/{id}/members', { params: { path: { id }, query: { limit: PAGE, cursor } } })).then((d) => page(d.members, d)),
  );
  const memberAction = useAction();
  const removal = useAction();

  const submit = async (e: Event) => {
    e.preventDefault();
    const g = await save.run(() =>
      ok(client.PATCH('/api/admin/groups/{id}', { params: { path: path() }, body: { name: name().trim(), description: description().trim() || null } })),
    );
    if (g) {
      props.onSaved(g);
      toast(t.saved);
    }
  };

  const remove = async (m: GroupMember) => {
    const who = m.name ?? m.email;
    if (!(await confirmAction(t.removeTitle(who, props.group.name), t.removeText, t.remove))) return;
    const done = await memberAction.run(async () => (await ok(client.DELETE('/api/admin/groups/{id}/members/{personId}', { params: { path: { ...path(), personId: m.id } } })), true));
    if (done) {
      toast(t.removed(who));
      members.refetch();
    }
  };

  const destroy = async () => {
    if (!(await confirmAction(t.deleteTitle(props.group.name), t.deleteText))) return;
    const done = await removal.run(async () => (await ok(client.DELETE('/api/admin/groups/{id}', { params: { path: path() } })), true));
    if (done) {
      toast(t.deleted(props.group.name));
      props.onDeleted();
    }
  };

  return (
    <>
      <p>
        <A href="/groups">{t.back}</A>
      </p>
      <h1>
        {props.group.name} <code>{props.group.id}</code>
      </h1>
      <Show when={props.group.description}>
        <p class="muted">{props.group.description}</p>
      </Show>
      <form class="card" novalidate onSubmit={submit} aria-label={t.settings}>
        <h2>{t.settings}</h2>
        <Field label={t.name} errors={fieldErrors(save.error()).name}>
          {(a) => <input {...a} name="name" value={name()} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label={t.description} errors={fieldErrors(save.error()).description}>
          {(a) => <input {...a} name="description" value={description()} maxLength={1000} onInput={(e) => setDescription(e.currentTarget.value)} />}
        </Field>
        <ErrorBox error={save.error()} fieldsShown />
        <div class="actions">
          <button class="primary" type="submit" disabled={save.busy() || !name().trim()}>
            {t.save}
          </button>
        </div>
      </form>

      <h2>{t.members}</h2>
      <AddMember groupId={props.group.id} onAdded={() => members.refetch()} />
      <ErrorBox error={memberAction.error()} />
      <Async resource={members.first}>
        {() => (
          <ListTable label={t.membersTable} rows={members.rows()} columns={t.memberColumns} empty={<>{t.noMembers}</>}>
            {(m) => (
              <tr data-member={m.email}>
                <td>
                  <A href={`/people/${enc(m.id)}`}>{m.name ?? m.email}</A> <Show when={m.name}><span class="muted">{m.email}</span></Show>
                </td>
                <td>
                  <code>{m.username}</code>
                </td>
                <td>{when(m.addedAt)}</td>
                <td>
                  <button type="button" class="small" onClick={() => remove(m)}>
                    {t.remove}
                  </button>
                </td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
      <LoadMore list={members} />

      <section class="card danger-zone" aria-label={t.danger}>
        <h2>{t.danger}</h2>
        <p class="muted">{t.deleteText}</p>
        <Show when={namedBy(removal.error()).length} fallback={<ErrorBox error={removal.error()} />}>
          <div class="error" role="alert">
            <p>{(removal.error() as ApiError).problem.detail}</p>
            <p class="named-by">{t.inUse}</p>
            <ul>
              <For each={namedBy(removal.error())}>
                {(use) => (
                  <li>
                    <A href={`/applications/${enc(use.applicationId)}`}>{use.applicationId}</A> — <code>{use.field}</code>
                  </li>
                )}
              </For>
            </ul>
          </div>
        </Show>
        <button type="button" class="danger" disabled={removal.busy()} onClick={destroy}>
          {t.deleteButton}
        </button>
      </section>
    </>
  );
}

/** Finds a person by e-mail (the people list's prefix search) and puts them in the group. */
function AddMember(props: { groupId: string; onAdded: () => void }) {
  const [email, setEmail] = createSignal('');
  const [typed, setTyped] = createSignal('');
  const action = useAction();
  const listId = `add-member-${props.groupId}`;
  // Suggestions: people whose address starts with what is typed (two characters at least).
  const [matches] = createResource(
    () => (typed().trim().length >= 2 ? typed().trim().toLowerCase() : undefined),
    (q) => ok(client.GET('/api/admin/people', { params: { query: { q, limit: 10 } } })).then((d) => d.people),
  );
  const submit = async (e: Event) => {
    e.preventDefault();
    const wanted = email().trim().toLowerCase();
    const done = await action.run(async () => {
      const found = (await ok(client.GET('/api/admin/people', { params: { query: { q: wanted, limit: 10 } } }))).people.find((p) => p.email === wanted);
      if (!found) throw new Error(t.notFound(wanted));
      await ok(client.PUT('/api/admin/groups/{id}/members/{personId}', { params: { path: { id: props.groupId, personId: found.id } } }));
      return true;
    });
    if (done) {
      toast(t.added(wanted));
      setEmail('');
      setTyped('');
      props.onAdded();
    }
  };
  return (
    <form class="card" novalidate onSubmit={submit} aria-label={t.addMemberForm}>
      <Field label={t.addMember} hint={t.addMemberHint}>
        {(a) => (
          <input
            {...a}
            type="email"
            name="email"
            list={listId}
            autocomplete="off"
            value={email()}
            onInput={(e) => {
              setEmail(e.currentTarget.value);
              setTyped(e.currentTarget.value);
            }}
          />
        )}
      </Field>
      <datalist id={listId}>
        <For each={matches.latest ?? []}>{(p) => <option value={p.email}>{p.name ?? p.email}</option>}</For>
      </datalist>
      <ErrorBox error={action.error()} />
      <div class="actions">
        <button class="primary" type="submit" disabled={action.busy() || !email().trim()}>
          {t.addButton}
        </button>
      </div>
    </form>
  );
}
