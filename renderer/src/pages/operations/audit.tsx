/**
 * The audit log: newest first, filtered by application, action, actor and date (kept in the
 * address, so a filtered view can be linked to, e.g. from a person's page). People, applications,
 * API keys and invitations show by name with links (the server names the ids a page mentions);
 * details show as key/value, and the client address under who did it. "Action" lists the actions
 * the log holds. The table fits a 1280 px window (fixed column shares, long names wrap) and scrolls
 * in its own box on a phone.
 */
import { createResource, createSignal, For, Show, type JSX } from 'solid-js';
import { A, useSearchParams } from '@solidjs/router';
import { client, enc, ok, type AuditEntry, type AuditPage as AuditAnswer } from '../../api';
import { Async, DataTable, Empty, ErrorBox, useAction, when } from '../../ui';
import { allApplications } from '../applications/list';

const t = {
  title: 'Audit log',
  filters: 'Filters',
  application: 'Application',
  anyApplication: 'Any application',
  action: 'Action',
  anyAction: 'Any action',
  actor: 'Who',
  anyone: 'Anyone',
  admin: 'Administrator',
  system: 'System',
  keyRotation: 'System (key rotation)',
  person: 'A person…',
  personEmail: 'Their e-mail address',
  noSuchPerson: (email: string) => `Nobody has the e-mail address ${email}.`,
  from: 'From',
  to: 'To (inclusive)',
  apply: 'Apply',
  clear: 'Clear filters',
  table: 'Audit log entries',
  columns: ['When', 'Who', 'What', 'Application', 'Target', 'Details'],
  from_: (ip: string) => `from ${ip}`,
  nothing: 'Nothing recorded yet.',
  nothingFiltered: 'No entries match these filters.',
  newest: 'Newest',
  older: 'Older',
  apiKey: (name: string) => `API key “${name}”`,
  unknownKey: (id: string) => `API key ${id}`,
};

/** The actions the log holds (GET /api/admin/audit-log/actions), plus one in the address that it does not. */
async function knownActions(): Promise<string[]> {
  return (await ok(client.GET('/api/admin/audit-log/actions'))).actions;
}

type Refs = AuditAnswer['references'];

/** `2026-11-25` (a local date) → the UTC instant of that local midnight; `to` is exclusive, so the next day's. */
function dayStart(date: string, next = false): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(y, m - 1, d + (next ? 1 : 0)).toISOString();
}

/** An action name that may wrap after its dots and underscores (`application.` / `redirect_` / `uris_changed`), not mid-word. */
function breakable(name: string): JSX.Element {
  return <For each={name.split(/(?<=[._])/)}>{(part, i) => <>{i() > 0 && <wbr />}{part}</>}</For>;
}

function value(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

export function AuditPage() {
  const [params, setParams] = useSearchParams<{ applicationId?: string; action?: string; actor?: string; from?: string; to?: string }>();
  const [cursor, setCursor] = createSignal<string | null>(null);
  const [apps] = createResource(allApplications);
  const [actions] = createResource(knownActions);
  const actionOptions = () => {
    const list = actions() ?? [];
    return params.action && !list.includes(params.action) ? [params.action, ...list] : list;
  };
  const [who, setWho] = createSignal(params.actor?.startsWith('person:') ? 'person' : (params.actor ?? ''));
  const [email, setEmail] = createSignal('');
  const find = useAction();
  const [page] = createResource(
    () => ({ ...params, cursor: cursor() }),
    (q) =>
      ok(
        client.GET('/api/admin/audit-log', {
          params: {
            query: {
              limit: 100,
              cursor: q.cursor ?? undefined,
              applicationId: q.applicationId || undefined,
              action: q.action || undefined,
              actor: q.actor || undefined,
              from: q.from ? dayStart(q.from) : undefined,
              to: q.to ? dayStart(q.to, true) : undefined,
            },
          },
        }),
      ),
  );
  const filtered = () => Boolean(params.applicationId || params.action || params.actor || params.from || params.to);
  const set = (next: Partial<typeof params>) => {
    setCursor(null);
    setParams(next);
  };

  const apply = async (e: Event) => {
    e.preventDefault();
    let actor: string | undefined = who() || undefined;
    if (who() === 'person') {
      const address = email().trim().toLowerCase();
      const found = await find.run(async () => {
        const answer = await ok(client.GET('/api/admin/people', { params: { query: { q: address, limit: 1 } } }));
        const person = answer.people.find((p) => p.email === address);
        if (!person) throw new Error(t.noSuchPerson(address));
        return person;
      });
      if (!found) return;
      actor = `person:${found.id}`;
    }
    set({ actor });
  };

  const personLink = (refs: Refs, id: string): JSX.Element => {
    const ref = refs[id];
    return <A href={`/people/${enc(ref?.personId ?? id)}`}>{ref?.label ?? id}</A>;
  };
  const appLink = (refs: Refs, id: string | null): JSX.Element => {
    if (!id) return <span class="muted">—</span>;
    return <A href={`/applications/${enc(id)}`}>{refs[id]?.label ?? id}</A>;
  };
  const actorCell = (refs: Refs, actor: string): JSX.Element => {
    if (actor === 'admin') return t.admin;
    if (actor === 'system') return t.system;
    if (actor === 'system:key-rotation') return t.keyRotation;
    const [kind, id = ''] = actor.split(/:(.*)/s);
    if (kind === 'person') return personLink(refs, id);
    if (kind === 'api_key') {
      const ref = refs[id];
      return ref?.applicationId ? <A href={`/applications/${enc(ref.applicationId)}/api-keys`}>{t.apiKey(ref.label)}</A> : t.unknownKey(id);
    }
    return <code>{actor}</code>;
  };
  const targetCell = (refs: Refs, e: AuditEntry): JSX.Element => {
    if (!e.target) return <span class="muted">—</span>;
    const ref = refs[e.target];
    if (!ref) return <code>{e.target}</code>;
    switch (ref.kind) {
      case 'person':
      case 'membership':
        return personLink(refs, e.target);
      case 'application':
        return appLink(refs, e.target);
      case 'api_key':
        return <A href={`/applications/${enc(ref.applicationId ?? '')}/api-keys`}>{t.apiKey(ref.label)}</A>;
      case 'invitation':
        return <A href={`/applications/${enc(ref.applicationId ?? '')}/invitations`}>{ref.label}</A>;
    }
  };

  return (
    <>
      <h1>{t.title}</h1>
      <form class="card filters" role="search" aria-label={t.filters} onSubmit={apply}>
        <label>
          <span>{t.application}</span>
          <select value={params.applicationId ?? ''} onChange={(e) => set({ applicationId: e.currentTarget.value || undefined })}>
            <option value="">{t.anyApplication}</option>
            <For each={apps() ?? []}>{(a) => <option value={a.id}>{a.name}</option>}</For>
          </select>
        </label>
        <label>
          <span>{t.action}</span>
          <select name="action" value={params.action ?? ''} onChange={(e) => set({ action: e.currentTarget.value || undefined })}>
            <option value="">{t.anyAction}</option>
            <For each={actionOptions()}>{(a) => <option value={a} selected={a === params.action}>{a}</option>}</For>
          </select>
        </label>
        <label>
          <span>{t.actor}</span>
          <select value={who()} onChange={(e) => setWho(e.currentTarget.value)}>
            <option value="">{t.anyone}</option>
            <option value="admin">{t.admin}</option>
            <option value="system">{t.system}</option>
            <option value="system:key-rotation">{t.keyRotation}</option>
            <option value="person">{t.person}</option>
          </select>
        </label>
        <Show when={who() === 'person'}>
          <label>
            <span>{t.personEmail}</span>
            <input type="email" value={email()} onInput={(e) => setEmail(e.currentTarget.value)} placeholder="ann@example.com" />
          </label>
        </Show>
        <label>
          <span>{t.from}</span>
          <input type="date" value={params.from ?? ''} onChange={(e) => set({ from: e.currentTarget.value || undefined })} />
        </label>
        <label>
          <span>{t.to}</span>
          <input type="date" value={params.to ?? ''} onChange={(e) => set({ to: e.currentTarget.value || undefined })} />
        </label>
        <div class="row">
          <button type="submit" class="primary" disabled={find.busy()}>
            {t.apply}
          </button>
          <Show when={filtered()}>
            <button
              type="button"
              onClick={() => {
                setWho('');
                setEmail('');
                set({ applicationId: undefined, action: undefined, actor: undefined, from: undefined, to: undefined });
              }}
            >
              {t.clear}
            </button>
          </Show>
        </div>
      </form>
      <ErrorBox error={find.error()} />
      <Async resource={page}>
        {(p) => (
          <Show when={p.entries.length} fallback={<Empty>{filtered() ? t.nothingFiltered : t.nothing}</Empty>}>
            <DataTable label={t.table} class="audit" columns={t.columns} rows={p.entries}>
              {(e) => (
                <tr data-action={e.action}>
                  <td>{when(e.at)}</td>
                  <td>
                    {actorCell(p.references, e.actor)}
                    <Show when={e.ip}>{(ip) => <div class="muted address">{t.from_(ip())}</div>}</Show>
                  </td>
                  <td>
                    <code>{breakable(e.action)}</code>
                  </td>
                  <td>{appLink(p.references, e.applicationId)}</td>
                  <td>{targetCell(p.references, e)}</td>
                  <td>
                    <Show when={Object.keys(e.details).length}>
                      <dl class="kv">
                        <For each={Object.entries(e.details)}>
                          {([k, v]) => (
                            <>
                              <dt>{k}</dt>
                              <dd>{value(v)}</dd>
                            </>
                          )}
                        </For>
                      </dl>
                    </Show>
                  </td>
                </tr>
              )}
            </DataTable>
            <div class="actions">
              <Show when={cursor()}>
                <button type="button" onClick={() => setCursor(null)}>
                  {t.newest}
                </button>
              </Show>
              <Show when={p.nextCursor}>
                <button type="button" onClick={() => setCursor(p.nextCursor)}>
                  {t.older}
                </button>
              </Show>
            </div>
          </Show>
        )}
      </Async>
    </>
  );
}
