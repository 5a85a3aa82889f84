import { createResource, createSignal, Show } from 'solid-js';
import { api, enc, listOf, type Application } from '../api';
import { Async, CopyField, ErrorBox, toast, useAction, when, ListTable } from '../ui';

interface Delivery {
  id: string;
  type: string;
  status: string;
  attempts: number;
  createdAt: string;
  lastAttemptAt?: string | null;
  nextAttemptAt?: string | null;
  lastStatusCode?: number | null;
  lastError?: string | null;
}

export function WebhooksTab(props: { app: Application; onSaved: (app: Application) => void }) {
  const appPath = `/api/admin/applications/${enc(props.app.id)}`;
  const [url, setUrl] = createSignal(props.app.webhookUrl ?? '');
  const [secret, setSecret] = createSignal('');
  const [shownSecret, setShownSecret] = createSignal<string | null>(null);
  const [deliveries, { refetch }] = createResource(() => api.get<unknown>(`${appPath}/webhook-deliveries?limit=50`).then((d) => listOf<Delivery>(d)));
  const save = useAction();
  const row = useAction();

  const submit = async (e: Event) => {
    e.preventDefault();
    const body: Record<string, unknown> = { webhookUrl: url().trim() || null };
    if (secret().trim()) body.webhookSecret = secret().trim();
    const next = await save.run(() => api.patch<Application>(appPath, body));
    if (next) {
      if (next.webhookSecret) setShownSecret(next.webhookSecret);
      setSecret('');
      props.onSaved(next);
      toast('Webhook settings saved.');
    }
  };
  const test = async () => {
    const r = await row.run(() => api.post(`${appPath}/webhook-test`));
    if (r !== undefined) {
      toast('Test event queued.');
      setTimeout(() => void refetch(), 1000);
    }
  };
  const retry = async (d: Delivery) => {
    const r = await row.run(() => api.post(`${appPath}/webhook-deliveries/${enc(d.id)}/retry`));
    if (r !== undefined) {
      toast('Delivery queued again.');
      void refetch();
    }
  };

  return (
    <>
      <form class="card" onSubmit={submit}>
        <label class="field">
          <span>Webhook URL</span>
          <input name="webhookUrl" type="url" value={url()} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://notes.example.com/hooks/gatehouse" />
        </label>
        <label class="field">
          <span>Signing secret</span>
          <input name="webhookSecret" type="password" value={secret()} onInput={(e) => setSecret(e.currentTarget.value)} placeholder={props.app.webhookSecretSet ? 'set — leave empty to keep it' : 'leave empty to generate one'} />
          <span class="hint">Deliveries are signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature).</span>
        </label>
        <Show when={shownSecret()}>
          {(s) => (
            <div class="notice">
              Generated secret — shown only now.
              <CopyField label="Webhook secret" value={s()} secret />
            </div>
          )}
        </Show>
        <ErrorBox error={save.error()} />
        <div class="actions">
          <button type="button" onClick={test} disabled={!props.app.webhookUrl}>
            Send test event
          </button>
          <button class="primary" type="submit" disabled={save.busy()}>
            Save webhook
          </button>
        </div>
      </form>
      <div class="row" style={{ 'justify-content': 'space-between' }}>
        <h2>Recent deliveries</h2>
        <button type="button" class="small" onClick={() => void refetch()}>
          Refresh
        </button>
      </div>
      <ErrorBox error={row.error()} />
      <Async resource={deliveries}>
        {(list) => (
          <ListTable rows={list} columns={['Event', 'Status', 'Attempts', 'Created', 'Last answer', '']} empty={<>No deliveries yet.</>}>
            {(d) => (
              <tr>
                <td>
                  <code>{d.type}</code>
                </td>
                <td>
                  <span class={`badge ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : 'warn'}`}>{d.status}</span>
                </td>
                <td>{d.attempts}</td>
                <td>{when(d.createdAt)}</td>
                <td>{d.lastStatusCode ?? d.lastError ?? '—'}</td>
                <td>
                  <Show when={d.status !== 'succeeded'}>
                    <button type="button" class="small" onClick={() => retry(d)}>
                      Retry
                    </button>
                  </Show>
                </td>
              </tr>
            )}
          </ListTable>
        )}
      </Async>
    </>
  );
}
