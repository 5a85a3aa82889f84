/**
 * Invitations: paste addresses (lines, commas, "Name <address>"), see the bad ones marked by line
 * as you type, invite the valid ones in batches of 100, and see which were skipped and why.
 */
import { createMemo, createSignal, For, Show } from 'solid-js';
import { ApiError, client, ok, type Application, type CreatedInvitations, type Invitation } from '../../api';
import { createPagedList, LoadMore, page, PAGE } from '../../paged';
import { plural } from '../../strings';
import { Async, confirmAction, CopyButton, ErrorBox, Field, toast, useAction, when, ListTable } from '../../ui';
import { addressesFound, emailListErrors, parseEmailLines, validEmails } from '../../validate';
import { GroupPicker } from '../../group-picker';
import { managesPeople } from '../../me';

const t = {
  invite: 'Invite people',
  placeholder: 'Paste addresses: one per line, or separated by commas',
  found: (valid: number, bad: number) => `${addressesFound(valid)}${bad ? `; ${bad} not ${bad === 1 ? 'an address' : 'addresses'}, skipped (marked below)` : ''}`,
  role: 'Role',
  roles: { member: 'member', admin: 'admin' },
  message: 'Message (optional)',
  groups: 'Groups (optional)',
  groupsHint: 'The people join these directory groups when they accept.',
  progress: 'Sending invitations',
  progressText: (done: number, total: number) => `${done} of ${total} done`,
  skippedTitle: (n: number) => `${plural(n, 'address was', 'addresses were')} not invited:`,
  reasons: {
    already_member: 'already a member',
    already_invited: 'already has a pending invitation',
    invalid: 'not an e-mail address',
    refused: (why: string) => `refused by the server: ${why}`,
  } as const,
  unsent: (n: number) =>
    `${n} invitation e-mail${n === 1 ? ' was' : 's were'} not sent (no mail server configured, or it refused). Copy the links below and send them yourself.`,
  sending: 'Sending…',
  send: (n: number) => (n ? `Send ${plural(n, 'invitation')}` : 'Send invitations'),
  toast: (created: number, unsent: number) => {
    if (created === 0) return 'No new invitations: every address was skipped.';
    if (unsent === 0) return `${plural(created, 'invitation')} sent.`;
    if (unsent === created) return `${plural(created, 'invitation')} created; none was e-mailed. Copy the links below.`;
    return `${plural(created, 'invitation')} created; ${unsent} of them not e-mailed. Copy those links below.`;
  },
  show: 'Show',
  filterLabel: 'Invitation status filter',
  statuses: [
    ['pending', 'pending'],
    ['accepted', 'accepted'],
    ['revoked', 'revoked'],
    ['expired', 'expired'],
    ['', 'all'],
  ] as const,
  table: 'Invitations',
  columns: ['E-mail', 'Role', 'Status', 'Sent', 'Expires', 'Actions'],
  empty: (status: string) => `No ${status} invitations.`,
  copyLink: (email: string) => `invitation link for ${email}`,
  resend: 'Resend',
  revoke: 'Revoke',
  revokeTitle: (email: string) => `Revoke the invitation for ${email}?`,
  revokeText: 'The link in their e-mail stops working.',
  revoked: (email: string) => `Invitation for ${email} revoked.`,
  resentUnsent: (email: string) => `New link for ${email} created; it was not e-mailed. Copy it below.`,
  resent: (email: string) => `Invitation for ${email} sent again.`,
};

/** What the toast says after a batch: only e-mails that went out are "sent". */
export const invitationsToast = t.toast;

const BATCH = 100; // the API takes at most 100 addresses per request (DESIGN §4.6)

type Skipped = { email: string; reason: string };

/**
 * Accept links are returned only when an invitation is made or resent (the server keeps a hash).
 * They are kept here, in this page's memory, for as long as the panel is open, so a link stays
 * copyable after leaving the tab and coming back (issue 44, m6); never in storage. After a reload,
 * "Resend" makes a new one.
 */
const [links, setLinks] = createSignal<Record<string, string>>({});

export function InvitationsTab(props: { app: Application }) {
  const [status, setStatus] = createSignal<string>('pending');
  const id = props.app.id;
  const path = { id };
  const invitations = createPagedList(status, (s, cursor) =>
    ok(
      client.GET('/api/admin/applications/{id}/invitations', {
        params: { path, query: { limit: PAGE, cursor, ...(s ? { status: s as 'pending' } : {}) } },
      }),
    ).then((d) => page(d.invitations, d)),
  );
  const refetch = invitations.refetch;
  const [text, setText] = createSignal('');
  const [role, setRole] = createSignal<'member' | 'admin'>('member');
  const [message, setMessage] = createSignal('');
  const [groups, setGroups] = createSignal<string[]>([]);
  const [progress, setProgress] = createSignal<{ done: number; total: number } | null>(null);
  const [skipped, setSkipped] = createSignal<Skipped[]>([]);
  const [unsent, setUnsent] = createSignal(0);
  const send = useAction();
  const row = useAction();
  const entries = createMemo(() => parseEmailLines(text()));
  const emails = () => validEmails(entries());
  const bad = () => emailListErrors(entries());

  /** Sends one batch; addresses the server refuses come back as skipped, and the rest are sent again. */
  const sendBatch = async (chunk: string[]): Promise<{ created: CreatedInvitations['invitations']; skipped: Skipped[] }> => {
    const body = { emails: chunk, role: role(), ...(message().trim() ? { message: message().trim() } : {}), ...(groups().length ? { groups: groups() } : {}) };
    try {
      const r = await ok(client.POST('/api/admin/applications/{id}/invitations', { params: { path }, body }));
      return { created: r.invitations, skipped: r.skipped.map((s) => ({ email: s.email, reason: t.reasons[s.reason] ?? s.reason })) };
    } catch (error) {
      // The server's address rule has the last word: drop what it names and send the rest.
      const refused = new Map<number, string>();
      if (error instanceof ApiError && error.status === 400) {
        for (const e of error.problem.errors ?? []) {
          const m = /^\/?body[./]emails[./](\d+)$/.exec(e.path);
          if (m) refused.set(Number(m[1]), e.message);
        }
      }
      if (!refused.size) throw error;
      const rest = chunk.filter((_, i) => !refused.has(i));
      const skippedHere = [...refused].map(([i, why]) => ({ email: chunk[i]!, reason: t.reasons.refused(why) }));
      if (!rest.length) return { created: [], skipped: skippedHere };
      const again = await sendBatch(rest);
      return { created: again.created, skipped: [...skippedHere, ...again.skipped] };
    }
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const all = emails();
    const invalid: Skipped[] = entries()
      .filter((x) => !x.email)
      .map((x) => ({ email: x.text, reason: t.reasons.invalid }));
    setSkipped(invalid);
    setUnsent(0);
    setProgress({ done: 0, total: all.length });
    let created = 0;
    await send.run(async () => {
      for (let i = 0; i < all.length; i += BATCH) {
        const r = await sendBatch(all.slice(i, i + BATCH));
        setLinks((l) => ({ ...l, ...Object.fromEntries(r.created.filter((x) => x.acceptUrl).map((x) => [x.id, x.acceptUrl!])) }));
        setSkipped((s) => [...s, ...r.skipped]);
        setUnsent((n) => n + r.created.filter((x) => x.emailSent === false).length);
        created += r.created.length;
        setProgress({ done: Math.min(i + BATCH, all.length), total: all.length });
      }
      setText('');
      toast(t.toast(created, unsent()));
    });
    void refetch();
  };
  const revoke = async (inv: Invitation) => {
    if (!(await confirmAction(t.revokeTitle(inv.email), t.revokeText, t.revoke))) return;
    const done = await row.run(async () => (await ok(client.DELETE('/api/admin/applications/{id}/invitations/{iid}', { params: { path: { id, iid: inv.id } } })), true));
    if (done) {
      toast(t.revoked(inv.email));
      void refetch();
    }
  };
  const resend = async (inv: Invitation) => {
    const r = await row.run(() => ok(client.POST('/api/admin/applications/{id}/invitations/{iid}/resend', { params: { path: { id, iid: inv.id } } })));
    if (r) {
      if (r.acceptUrl) setLinks((l) => ({ ...l, [inv.id]: r.acceptUrl! }));
      toast(r.emailSent === false ? t.resentUnsent(inv.email) : t.resent(inv.email));
      void refetch();
    }
  };

  return (
    <>
      <form class="card" novalidate onSubmit={submit}>
        <Field label={t.invite} hint={t.found(emails().length, entries().filter((x) => !x.email).length)} errors={bad()}>
          {(a) => <textarea {...a} name="emails" value={text()} onInput={(e) => setText(e.currentTarget.value)} placeholder={t.placeholder} />}
        </Field>
        <div class="row">
          <label>
            {t.role}{' '}
            <select name="role" value={role()} onChange={(e) => setRole(e.currentTarget.value as 'member' | 'admin')}>
              <option value="member">{t.roles.member}</option>
              <option value="admin">{t.roles.admin}</option>
            </select>
          </label>
        </div>
        <Field label={t.message}>
          {(a) => <input {...a} name="message" value={message()} maxLength={1000} onInput={(e) => setMessage(e.currentTarget.value)} />}
        </Field>
        {/* Directory groups reach past this application: owners and people managers only. */}
        <Show when={managesPeople()}>
          <GroupPicker label={t.groups} hint={t.groupsHint} value={groups()} onChange={setGroups} />
        </Show>
        <Show when={progress()}>
          {(p) => (
            <p>
              <progress class="progress" max={p().total} value={p().done} aria-label={t.progress} /> {t.progressText(p().done, p().total)}
            </p>
          )}
        </Show>
        <Show when={skipped().length}>
          <div class="notice" data-testid="skipped">
            <p>{t.skippedTitle(skipped().length)}</p>
            <ul>
              <For each={skipped()}>
                {(s) => (
                  <li>
                    <strong>{s.email}</strong> — {s.reason}
                  </li>
                )}
              </For>
            </ul>
          </div>
        </Show>
        <Show when={unsent()}>
          <div class="notice">{t.unsent(unsent())}</div>
        </Show>
        <ErrorBox error={send.error()} />
        <div class="actions">
          <button class="primary" type="submit" disabled={send.busy() || emails().length === 0}>
            {send.busy() ? t.sending : t.send(emails().length)}
          </button>
        </div>
      </form>
      <div class="row">
        <label>
          {t.show}{' '}
          <select aria-label={t.filterLabel} value={status()} onChange={(e) => setStatus(e.currentTarget.value)}>
            <For each={t.statuses}>{([value, label]) => <option value={value}>{label}</option>}</For>
          </select>
        </label>
      </div>
      <ErrorBox error={row.error()} />
      <Async resource={invitations.first}>
        {() => (
          <ListTable label={t.table} rows={invitations.rows()} columns={t.columns} empty={<>{t.empty(status())}</>}>
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
                  <Show when={links()[inv.id]}>{(link) => <CopyButton value={link()} label={t.copyLink(inv.email)} />}</Show>
                  <Show when={inv.status === 'pending' || inv.status === 'expired'}>
                    <button type="button" class="small" onClick={() => resend(inv)}>
                      {t.resend}
                    </button>
                  </Show>
                  <Show when={inv.status === 'pending'}>
                    <button type="button" class="small danger" onClick={() => revoke(inv)}>
                      {t.revoke}
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
