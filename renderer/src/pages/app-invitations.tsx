import { createSignal, For, Show } from 'solid-js';
import { api, enc, type Application, type Invitation } from '../api';
import { createPagedList, LoadMore } from '../paged';
import { Async, confirmAction, CopyButton, ErrorBox, toast, useAction, when, ListTable } from '../ui';

/** Splits pasted text (lines, commas, semicolons, "Name <a@b>") into distinct addresses. */
export function parseEmails(text: string): string[] {
  const found = text.match(/[^\s,;<>"']+@[^\s,;<>"']+/g) ?? [];
  return [...new Set(found.map((e) => e.toLowerCase()))];
}

/** What the toast says after a batch: only e-mails that went out are "sent". */
export function invitationsToast(created: number, unsent: number): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (created === 0) return 'No new invitations: every address was skipped.';
  if (unsent === 0) return `${plural(created, 'invitation')} sent.`;
  if (unsent === created) return `${plural(created, 'invitation')} created; none was e-mailed. Copy the links below.`;
  return `${plural(created, 'invitation')} created; ${unsent} of them not e-mailed. Copy those links below.`;
}

const BATCH = 100; // the API takes at most 100 addresses per request (DESIGN §4.6)

export function InvitationsTab(props: { app: Application }) {
  const [status, setStatus] = createSignal('pending');
  const base = `/api/admin/applications/${enc(props.app.id)}/invitations`;
  const invitations = createPagedList<Invitation>(() => (status() ? `${base}?status=${enc(status())}` : base));
  const refetch = invitations.refetch;
  const [text, setText] = createSignal('');
  const [role, setRole] = createSignal('member');
  const [message, setMessage] = createSignal('');
  const [progress, setProgress] = createSignal<{ done: number; total: number } | null>(null);
  const [skipped, setSkipped] = createSignal<{ email: string; reason: string }[]>([]);
  // Accept links are returned only by the create call; keep them for this visit so they can be copied.
  const [links, setLinks] = createSignal<Record<string, string>>({});
  const [unsent, setUnsent] = createSignal(0);
  const send = useAction();
  const row = useAction();
  const emails = () => parseEmails(text());

  const submit = async (e: Event) => {
    e.preventDefault();
    const all = emails();
    setSkipped([]);
    setUnsent(0);
    setProgress({ done: 0, total: all.length });
    let created = 0;
    await send.run(async () => {
      for (let i = 0; i < all.length; i += BATCH) {
        const chunk = all.slice(i, i + BATCH);
        const r = await api.post<{ invitations: Invitation[]; skipped: { email: string; reason: string }[] }>(base, {
          emails: chunk,
          role: role(),
          ...(message().trim() ? { message: message().trim() } : {}),
        });
        setLinks((l) => ({ ...l, ...Object.fromEntries(r.invitations.filter((x) => x.acceptUrl).map((x) => [x.id, x.acceptUrl!])) }));
        setSkipped((s) => [...s, ...(r.skipped ?? [])]);
        setUnsent((n) => n + r.invitations.filter((x) => x.emailSent === false).length);
        created += r.invitations.length;
        setProgress({ done: Math.min(i + BATCH, all.length), total: all.length });
      }
      setText('');
      toast(invitationsToast(created, unsent()));
    });
    void refetch();
  };
  const revoke = async (inv: Invitation) => {
    if (!(await confirmAction(`Revoke the invitation for ${inv.email}?`, 'The link in their e-mail stops working.', 'Revoke'))) return;
    const ok = await row.run(async () => (await api.del(`${base}/${enc(inv.id)}`), true));
    if (ok) {
      toast(`Invitation for ${inv.email} revoked.`);
      void refetch();
    }
  };
  const resend = async (inv: Invitation) => {
    const r = await row.run(() => api.post<Invitation>(`${base}/${enc(inv.id)}/resend`));
    if (r) {
      if (r.acceptUrl) setLinks((l) => ({ ...l, [inv.id]: r.acceptUrl! }));
      toast(r.emailSent === false ? `New link for ${inv.email} created; it was not e-mailed. Copy it below.` : `Invitation for ${inv.email} sent again.`);
      void refetch();
    }
  };

  return (
    <>
      <form class="card" onSubmit={submit}>
        <label class="field">
          <span>Invite people</span>
          <textarea name="emails" value={text()} onInput={(e) => setText(e.currentTarget.value)} placeholder="Paste addresses: one per line, or separated by commas" />
          <span class="hint">{emails().length} address{emails().length === 1 ? '' : 'es'} found</span>
        </label>
        <div class="row">
          <label>
            Role{' '}
            <select name="role" value={role()} onChange={(e) => setRole(e.currentTarget.value)}>
              <option value="member">member</option>
              <option value="admin">admin</option>
            </select>
          </label>
        </div>
        <label class="field">
          <span>Message (optional)</span>
          <input name="message" value={message()} maxLength={1000} onInput={(e) => setMessage(e.currentTarget.value)} />
        </label>
        <Show when={progress()}>
          {(p) => (
            <p>
              <progress class="progress" max={p().total} value={p().done} aria-label="Sending invitations" /> {p().done} of {p().total} done
            </p>
          )}
        </Show>
        <Show when={skipped().length}>
          <div class="notice">
            Skipped: <For each={skipped()}>{(s) => <span>{s.email} ({s.reason.replace('_', ' ')}) </span>}</For>
          </div>
        </Show>
        <Show when={unsent()}>
          <div class="notice">
            {unsent()} invitation e-mail{unsent() === 1 ? ' was' : 's were'} not sent (no mail server configured, or it refused). Copy the links
            below and send them yourself.
          </div>
        </Show>
        <ErrorBox error={send.error()} />
        <div class="actions">
          <button class="primary" type="submit" disabled={send.busy() || emails().length === 0}>
            {send.busy() ? 'Sending…' : `Send ${emails().length || ''} invitation${emails().length === 1 ? '' : 's'}`}
          </button>
        </div>
      </form>
      <div class="row">
        <label>
          Show{' '}
          <select aria-label="Invitation status filter" value={status()} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="pending">pending</option>
            <option value="accepted">accepted</option>
            <option value="revoked">revoked</option>
            <option value="expired">expired</option>
            <option value="">all</option>
          </select>
        </label>
      </div>
      <ErrorBox error={row.error()} />
      <Async resource={invitations.first}>
        {() => (
          <ListTable rows={invitations.rows()} columns={['E-mail', 'Role', 'Status', 'Sent', 'Expires', 'Actions']} empty={<>No {status() || ''} invitations.</>}>
            {(inv) => (
              <tr data-invitation={inv.email}>
                <td>{inv.email}</td>
                <td>{inv.role}</td>
                <td>
                  <span class={`badge ${inv.status === 'accepted' ? 'ok' : inv.status === 'pending' ? 'warn' : 'bad'}`}>{inv.status}</span>
                </td>
                <td>{when(inv.createdAt)}</td>
                <td>{when(inv.expiresAt)}</td>
                <td class="row">
                  <Show when={links()[inv.id]}>{(link) => <CopyButton value={link()} label={`invitation link for ${inv.email}`} />}</Show>
                  <Show when={inv.status === 'pending' || inv.status === 'expired'}>
                    <button type="button" class="small" onClick={() => resend(inv)}>
                      Resend
                    </button>
                  </Show>
                  <Show when={inv.status === 'pending'}>
                    <button type="button" class="small danger" onClick={() => revoke(inv)}>
                      Revoke
                    </button>
                  </Show>
                </td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
      <LoadMore list={invitations} />
    </>
  );
}
