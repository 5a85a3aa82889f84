/**
 * People across applications: everyone with an account, and one person's page (username, names,
 * e-mail verification, directory groups, memberships and sign-in methods).
 */
import { createResource, createSignal, For, Show } from 'solid-js';
import { A, useParams } from '@solidjs/router';
import { client, enc, fieldErrors, ok, type Person } from '../api';
import { GroupPicker } from '../group-picker';
import { createPagedList, LoadMore, page, PAGE } from '../paged';
import { Async, DataTable, ErrorBox, Field, ListTable, Loading, toast, useAction, when } from '../ui';

const t = {
  title: 'People',
  intro: 'Everyone with an account on this Gatehouse, whatever the application.',
  search: 'Search people',
  searchPlaceholder: 'E-mail address, or its beginning',
  searchButton: 'Search',
  table: 'People',
  columns: ['Person', 'Username', 'E-mail verified', 'Applications', 'Joined Gatehouse'],
  empty: (q: string) => (q ? `Nobody's e-mail address starts with “${q}”.` : 'Nobody has an account yet.'),
  yes: 'yes',
  no: 'no',
  memberships: 'Applications',
  noMemberships: 'Not a member of any application (an account for the account pages only).',
  membershipTable: 'Memberships',
  membershipColumns: ['Application', 'Status', 'Role', 'Joined', 'Last active'],
  signIn: 'Sign-in methods',
  password: 'E-mail and password',
  linked: (provider: string, email: string) => `${provider} (${email})`,
  none: 'None: this person cannot sign in until they reset a password or an administrator helps.',
  audit: 'Their entries in the audit log',
  facts: (email: string, verified: boolean, created: string) => `${email} · e-mail ${verified ? 'verified' : 'not verified'} · account since ${created}`,
  details: 'Username and names',
  username: 'Username',
  usernameHint: 'What applications see as preferred_username: lower-case letters, digits, “.”, “_” and “-”. Only an administrator can change it.',
  name: 'Full name',
  givenName: 'Given name',
  familyName: 'Family name',
  emailVerified: 'E-mail address verified',
  emailVerifiedHint: 'Applications see it as email_verified. Tick it only when you know the address is theirs.',
  save: 'Save',
  saved: 'Saved.',
  groups: 'Groups',
  groupsHint: 'Their directory groups: applications that ask for the groups scope see them.',
  groupsSaved: 'Groups saved.',
};

export function PeoplePage() {
  const [q, setQ] = createSignal('');
  const [search, setSearch] = createSignal('');
  const people = createPagedList(search, (query, cursor) =>
    ok(client.GET('/api/admin/people', { params: { query: { limit: PAGE, cursor, ...(query ? { q: query } : {}) } } })).then((d) => page(d.people, d)),
  );
  return (
    <>
      <h1>{t.title}</h1>
      <p class="muted">{t.intro}</p>
      <form class="row card" role="search" onSubmit={(e) => (e.preventDefault(), setSearch(q().trim()))}>
        <input type="search" aria-label={t.search} placeholder={t.searchPlaceholder} value={q()} onInput={(e) => setQ(e.currentTarget.value)} />
        <button type="submit">{t.searchButton}</button>
      </form>
      <Async resource={people.first}>
        {() => (
          <ListTable label={t.table} rows={people.rows()} columns={t.columns} empty={<>{t.empty(search())}</>}>
            {(p) => (
              <tr data-person={p.email}>
                <td>
                  <A href={`/people/${enc(p.id)}`}>{p.name ?? p.email}</A> <Show when={p.name}><span class="muted">{p.email}</span></Show>
                </td>
                <td>
                  <code>{p.username}</code>
                </td>
                <td>{p.emailVerified ? t.yes : t.no}</td>
                <td>{p.applications}</td>
                <td>{when(p.createdAt)}</td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
      <LoadMore list={people} />
    </>
  );
}

export function PersonPage() {
  const params = useParams<{ id: string }>();
  const [person, { mutate }] = createResource(
    () => params.id,
    (id) => ok(client.GET('/api/admin/people/{id}', { params: { path: { id } } })),
  );
  return (
    <Show when={!person.error} fallback={<ErrorBox error={person.error} />}>
      <Show when={person.latest} fallback={<Loading />}>
        {(p) => (
          <>
            <h1>{p().name ?? p().email}</h1>
            <p class="muted">{t.facts(p().email, p().emailVerified, when(p().createdAt))}</p>
            <PersonDetails person={p()} onSaved={(next) => mutate(next)} />
            <PersonGroups person={p()} onSaved={(next) => mutate(next)} />
            <h2>{t.memberships}</h2>
            <Show when={p().memberships.length} fallback={<p class="muted">{t.noMemberships}</p>}>
              <DataTable label={t.membershipTable} columns={t.membershipColumns} rows={p().memberships}>
                {(m) => (
                  <tr data-membership={m.applicationId}>
                    <td>
                      <A href={`/applications/${enc(m.applicationId)}/members`}>{m.applicationName}</A>
                    </td>
                    <td>
                      <span class={`badge ${m.status === 'active' ? 'ok' : 'bad'}`}>{m.status}</span>
                    </td>
                    <td>{m.role}</td>
                    <td>{when(m.joinedAt)}</td>
                    <td>{when(m.lastActiveAt)}</td>
                  </tr>
                )}
              </DataTable>
            </Show>
            <h2>{t.signIn}</h2>
            <ul>
              <Show when={p().hasPassword}>
                <li>{t.password}</li>
              </Show>
              <For each={p().linkedAccounts.filter((a) => a.provider !== 'credential')}>{(a) => <li>{t.linked(a.provider, a.email)}</li>}</For>
            </ul>
            <Show when={!p().hasPassword && !p().linkedAccounts.some((a) => a.provider !== 'credential')}>
              <p class="muted">{t.none}</p>
            </Show>
            <p>
              <A href={`/audit-log?actor=${enc(`person:${p().id}`)}`}>{t.audit}</A>
            </p>
          </>
        )}
      </Show>
    </Show>
  );
}

/** The administrator's edit of a person (PATCH /api/admin/people/:id): username, names, e-mail verified. */
function PersonDetails(props: { person: Person; onSaved: (p: Person) => void }) {
  const [username, setUsername] = createSignal(props.person.username);
  const [name, setName] = createSignal(props.person.name ?? '');
  const [givenName, setGivenName] = createSignal(props.person.givenName ?? '');
  const [familyName, setFamilyName] = createSignal(props.person.familyName ?? '');
  const [verified, setVerified] = createSignal(props.person.emailVerified);
  const save = useAction();
  const errors = () => fieldErrors(save.error());
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = {
      username: username().trim(),
      name: name().trim() || null,
      givenName: givenName().trim() || null,
      familyName: familyName().trim() || null,
      emailVerified: verified(),
    };
    const saved = await save.run(() => ok(client.PATCH('/api/admin/people/{id}', { params: { path: { id: props.person.id } }, body })));
    if (saved) {
      props.onSaved(saved);
      setUsername(saved.username);
      toast(t.saved);
    }
  };
  return (
    <form class="card" novalidate onSubmit={submit} aria-label={t.details}>
      <h2>{t.details}</h2>
      <Field label={t.username} hint={t.usernameHint} errors={errors().username}>
        {(a) => <input {...a} name="username" value={username()} maxLength={64} autocomplete="off" onInput={(e) => setUsername(e.currentTarget.value)} />}
      </Field>
      <Field label={t.name} errors={errors().name}>
        {(a) => <input {...a} name="name" value={name()} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <Field label={t.givenName} errors={errors().givenName}>
        {(a) => <input {...a} name="givenName" value={givenName()} maxLength={100} onInput={(e) => setGivenName(e.currentTarget.value)} />}
      </Field>
      <Field label={t.familyName} errors={errors().familyName}>
        {(a) => <input {...a} name="familyName" value={familyName()} maxLength={100} onInput={(e) => setFamilyName(e.currentTarget.value)} />}
      </Field>
      <label class="check">
        <input type="checkbox" name="emailVerified" checked={verified()} onChange={(e) => setVerified(e.currentTarget.checked)} /> {t.emailVerified}
      </label>
      <p class="hint">{t.emailVerifiedHint}</p>
      <ErrorBox error={save.error()} fieldsShown />
      <div class="actions">
        <button class="primary" type="submit" disabled={save.busy() || !username().trim()}>
          {t.save}
        </button>
      </div>
    </form>
  );
}

/** A person's directory groups: each change is a PUT or DELETE of one membership, at once. */
function PersonGroups(props: { person: Person; onSaved: (p: Person) => void }) {
  const action = useAction();
  const change = async (ids: string[]) => {
    const before = props.person.groups.map((g) => g.id);
    const added = ids.filter((id) => !before.includes(id));
    const removed = before.filter((id) => !ids.includes(id));
    const path = (id: string) => ({ params: { path: { id, personId: props.person.id } } });
    const saved = await action.run(async () => {
      for (const id of added) await ok(client.PUT('/api/admin/groups/{id}/members/{personId}', path(id)));
      for (const id of removed) await ok(client.DELETE('/api/admin/groups/{id}/members/{personId}', path(id)));
      return ok(client.GET('/api/admin/people/{id}', { params: { path: { id: props.person.id } } }));
    });
    if (saved) {
      props.onSaved(saved);
      toast(t.groupsSaved);
    }
  };
  return (
    <section aria-label={t.groups}>
      <GroupPicker
        label={t.groups}
        hint={t.groupsHint}
        value={props.person.groups.map((g) => g.id)}
        onChange={(ids) => void change(ids)}
        disabled={action.busy()}
        hrefOf={(id) => `/groups/${enc(id)}`}
      />
      <ErrorBox error={action.error()} />
    </section>
  );
}
