import { createSignal, Show } from 'solid-js';
import { api, enc, type Application, type Member } from '../api';
import { createPagedList, LoadMore } from '../paged';
import { Async, confirmAction, ErrorBox, toast, useAction, when, ListTable } from '../ui';

export function MembersTab(props: { app: Application }) {
  const [status, setStatus] = createSignal('');
  const [role, setRole] = createSignal('');
  const [q, setQ] = createSignal('');
  const [search, setSearch] = createSignal('');
  const query = () => {
    const p = new URLSearchParams();
    if (status()) p.set('status', status());
    if (role()) p.set('role', role());
    if (search()) p.set('q', search());
    return `/api/admin/applications/${enc(props.app.id)}/users?${p}`;
  };
  const members = createPagedList<Member>(query);
  const refetch = members.refetch;
  const action = useAction();
  const base = `/api/admin/applications/${enc(props.app.id)}/users`;

  const patch = async (m: Member, body: { status?: string; role?: string }, message: string) => {
    if (body.status === 'suspended' && !(await confirmAction(`Suspend ${m.email}?`, 'They are signed out of this application at once and cannot sign in until activated.', 'Suspend'))) return;
    const r = await action.run(() => api.patch(`${base}/${enc(m.id)}`, body));
    if (r !== undefined) {
      toast(message);
      void refetch();
    }
  };
  const remove = async (m: Member) => {
    if (!(await confirmAction(`Remove ${m.email}?`, 'They lose access to this application and their profile for it is deleted.', 'Remove'))) return;
    const ok = await action.run(async () => (await api.del(`${base}/${enc(m.id)}`), true));
    if (ok) {
      toast(`${m.email} removed.`);
      void refetch();
    }
  };

  return (
    <>
      <form class="row card" role="search" onSubmit={(e) => (e.preventDefault(), setSearch(q().trim()))}>
        <input type="search" aria-label="Search members" placeholder="Search e-mail or name" value={q()} onInput={(e) => setQ(e.currentTarget.value)} />
        <select aria-label="Status filter" value={status()} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">Any status</option>
          <option value="active">Active</option>
          <option value="suspended">Suspended</option>
        </select>
        <select aria-label="Role filter" value={role()} onChange={(e) => setRole(e.currentTarget.value)}>
          <option value="">Any role</option>
          <option value="member">Member</option>
          <option value="admin">Admin</option>
        </select>
        <button type="submit">Search</button>
      </form>
      <ErrorBox error={action.error()} />
      <Async resource={members.first}>
        {() => (
          <ListTable rows={members.rows()} columns={['Person', 'Status', 'Role', 'Joined', 'Last active', 'Actions']} empty={<>No members{search() || status() || role() ? ' match these filters' : ' yet — invite people from the Invitations tab'}.</>}>
            {(m) => (
              <tr data-member={m.email}>
                <td>
                  {m.name ?? ''} <span class="muted">{m.email}</span>
                </td>
                <td>
                  <span class={`badge ${m.status === 'active' ? 'ok' : 'bad'}`}>{m.status}</span>
                </td>
                <td>
                  <select aria-label={`Role of ${m.email}`} value={m.role} onChange={(e) => patch(m, { role: e.currentTarget.value }, `${m.email} is now ${e.currentTarget.value}.`)}>
                    <option value="member">member</option>
                    <option value="admin">admin</option>
                  </select>
                </td>
                <td>{when(m.joinedAt)}</td>
                <td>{when(m.lastActiveAt)}</td>
                <td class="row">
                  <Show
                    when={m.status === 'active'}
                    fallback={
                      <button type="button" class="small" onClick={() => patch(m, { status: 'active' }, `${m.email} activated.`)}>
                        Activate
                      </button>
                    }
                  >
                    <button type="button" class="small" onClick={() => patch(m, { status: 'suspended' }, `${m.email} suspended.`)}>
                      Suspend
                    </button>
                  </Show>
                  <button type="button" class="small danger" onClick={() => remove(m)}>
                    Remove
                  </button>
                </td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
      <LoadMore list={members} />
    </>
  );
}
