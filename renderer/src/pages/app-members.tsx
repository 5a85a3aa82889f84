import { createSignal, Show } from 'solid-js';
import { api, enc, type Application, type Member, type MemberDetail, type SecondFactorSummary } from '../api';
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

  // One member's second factors at a time, read on demand (the list does not carry them).
  const [factors, setFactors] = createSignal<{ member: Member; summary: SecondFactorSummary } | undefined>();
  const showFactors = async (m: Member) => {
    if (factors()?.member.id === m.id) return setFactors(undefined);
    const detail = await action.run(() => api.get<MemberDetail>(`${base}/${enc(m.id)}`));
    if (detail) setFactors({ member: m, summary: detail.secondFactor });
  };
  const resetFactors = async (m: Member) => {
    const ok = await confirmAction(
      `Reset the second factor of ${m.email}?`,
      'For a lost device: their authenticator app, passkeys and recovery codes are removed, and they are signed out everywhere. They sign in again with their password (and set up a new factor if an application requires one). This affects every application they use.',
      'Reset second factor',
    );
    if (!ok) return;
    const done = await action.run(async () => (await api.del(`${base}/${enc(m.id)}/second-factor`), true));
    if (done) {
      toast(`Second factor of ${m.email} reset; they were signed out everywhere.`);
      setFactors(undefined);
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
                  <button type="button" class="small" aria-expanded={factors()?.member.id === m.id} onClick={() => showFactors(m)}>
                    Second factor
                  </button>
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
      <Show when={factors()}>
        {(f) => (
          <div class="card" data-second-factor={f().member.email}>
            <h2>Second factor of {f().member.email}</h2>
            <ul>
              <li>Authenticator app: {f().summary.totp.enabled ? `on since ${when(f().summary.totp.confirmedAt)}` : 'none'}</li>
              <li>
                Passkeys: {f().summary.passkeys.count}
                {f().summary.passkeys.lastUsedAt ? ` (last used ${when(f().summary.passkeys.lastUsedAt)})` : ''}
              </li>
              <li>Recovery codes left: {f().summary.recoveryCodes.remaining}</li>
            </ul>
            <Show
              when={f().summary.totp.enabled || f().summary.passkeys.count > 0 || f().summary.recoveryCodes.remaining > 0}
              fallback={<p class="muted">Nothing to reset: no second factor is set up.</p>}
            >
              <button type="button" class="danger" onClick={() => resetFactors(f().member)}>
                Reset second factor…
              </button>
            </Show>
          </div>
        )}
      </Show>
    </>
  );
}
