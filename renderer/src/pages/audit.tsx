import { createResource, createSignal, For, Show } from 'solid-js';
import { api, listOf } from '../api';
import { Async, Empty, when } from '../ui';

interface Entry {
  id: string;
  at: string;
  actor: string;
  action: string;
  applicationId: string | null;
  target: string | null;
  details?: Record<string, unknown>;
}

export function AuditPage() {
  const [app, setApp] = createSignal('');
  const [cursor, setCursor] = createSignal<string | null>(null);
  const [page] = createResource(
    () => ({ app: app(), cursor: cursor() }),
    async ({ app, cursor }) => {
      const q = new URLSearchParams({ limit: '100' });
      if (app) q.set('applicationId', app);
      if (cursor) q.set('cursor', cursor);
      const data = await api.get<{ nextCursor?: string | null }>(`/api/admin/audit-log?${q}`);
      return { entries: listOf<Entry>(data), next: data.nextCursor ?? null };
    },
  );
  return (
    <>
      <h1>Audit log</h1>
      <form class="row card" onSubmit={(e) => e.preventDefault()}>
        <label>
          Application id{' '}
          <input type="search" value={app()} onChange={(e) => (setCursor(null), setApp(e.currentTarget.value.trim()))} placeholder="all" />
        </label>
      </form>
      <Async resource={page}>
        {(p) => (
          <Show when={p.entries.length} fallback={<Empty>Nothing recorded yet.</Empty>}>
            <table>
              <thead>
                <tr>
                  <th>When</th>
                  <th>Who</th>
                  <th>What</th>
                  <th>Application</th>
                  <th>Target</th>
                  <th>Details</th>
                </tr>
              </thead>
              <tbody>
                <For each={p.entries}>
                  {(e) => (
                    <tr>
                      <td>{when(e.at)}</td>
                      <td>
                        <code>{e.actor}</code>
                      </td>
                      <td>{e.action}</td>
                      <td>{e.applicationId ?? '—'}</td>
                      <td>{e.target ?? '—'}</td>
                      <td>
                        <Show when={e.details && Object.keys(e.details).length}>
                          <code>{JSON.stringify(e.details)}</code>
                        </Show>
                      </td>
                    </tr>
                  )}
                </For>
              </tbody>
            </table>
            <div class="actions">
              <Show when={cursor()}>
                <button type="button" onClick={() => setCursor(null)}>
                  Newest
                </button>
              </Show>
              <Show when={p.next}>
                <button type="button" onClick={() => setCursor(p.next)}>
                  Older
                </button>
              </Show>
            </div>
          </Show>
        )}
      </Async>
    </>
  );
}
