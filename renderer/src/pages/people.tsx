/** People across applications: everyone with an account, and one person's memberships. */
import { createResource, createSignal, For, Show } from 'solid-js';
import { A, useParams } from '@solidjs/router';
import { client, enc, ok } from '../api';
import { createPagedList, LoadMore, page, PAGE } from '../paged';
import { Async, DataTable, ErrorBox, ListTable, Loading, when } from '../ui';

const t = {
  title: 'People',
  intro: 'Everyone with an account on this Gatehouse, whatever the application.',
  search: 'Search people',
  searchPlaceholder: 'E-mail address, or its beginning',
  searchButton: 'Search',
  table: 'People',
  columns: ['Person', 'E-mail verified', 'Applications', 'Joined Gatehouse'],
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
  const [person] = createResource(
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
