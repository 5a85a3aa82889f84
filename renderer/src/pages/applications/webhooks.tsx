import { createResource, createSignal, Show } from 'solid-js';
import { client, fieldErrors, ok, type Application, type Delivery } from '../../api';
import { Async, CopyField, ErrorBox, Field, toast, useAction, when, ListTable } from '../../ui';
import { webhookSecretErrors, webhookUrlErrors } from '../../validate';

const t = {
  url: 'Webhook URL',
  urlHint: 'Leave empty to send no events. Events are POSTed here as JSON.',
  secret: 'Signing secret',
  secretSet: 'set — leave empty to keep it',
  secretEmpty: 'leave empty to generate one',
  secretHint: 'Deliveries are signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature).',
  generated: 'Generated secret — shown only now.',
  secretLabel: 'Webhook secret',
  test: 'Send test event',
  save: 'Save webhook',
  saved: 'Webhook settings saved.',
  queued: 'Test event queued.',
  requeued: 'Delivery queued again.',
  recent: 'Recent deliveries',
  refresh: 'Refresh',
  table: 'Webhook deliveries',
  columns: ['Event', 'Status', 'Attempts', 'Created', 'Last answer', ''],
  empty: 'No deliveries yet.',
  retry: 'Retry',
};

export function WebhooksTab(props: { app: Application; onSaved: (app: Application) => void }) {
  const path = { id: props.app.id };
  const [url, setUrl] = createSignal(props.app.webhookUrl ?? '');
  const [secret, setSecret] = createSignal('');
  const [shownSecret, setShownSecret] = createSignal<string | null>(null);
  const [deliveries, { refetch }] = createResource(() =>
    ok(client.GET('/api/admin/applications/{id}/webhook-deliveries', { params: { path, query: { limit: 50 } } })).then((d) => d.deliveries),
  );
  const save = useAction();
  const row = useAction();
  const server = () => fieldErrors(save.error());
  const errors = {
    url: () => [...webhookUrlErrors(url()), ...(server().webhookUrl ?? [])],
    secret: () => [...webhookSecretErrors(secret()), ...(server().webhookSecret ?? [])],
  };
  const valid = () => !webhookUrlErrors(url()).length && !webhookSecretErrors(secret()).length;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!valid()) return;
    const body = { webhookUrl: url().trim() || null, ...(secret().trim() ? { webhookSecret: secret().trim() } : {}) };
    const next = await save.run(() => ok(client.PATCH('/api/admin/applications/{id}', { params: { path }, body })));
    if (next) {
      if (next.webhookSecret) setShownSecret(next.webhookSecret);
      setSecret('');
      props.onSaved(next);
      toast(t.saved);
    }
  };
  const test = async () => {
    const r = await row.run(() => ok(client.POST('/api/admin/applications/{id}/webhook-test', { params: { path } })));
    if (r !== undefined) {
      toast(t.queued);
      setTimeout(() => void refetch(), 1000);
    }
  };
  const retry = async (d: Delivery) => {
    const r = await row.run(() => ok(client.POST('/api/admin/applications/{id}/webhook-deliveries/{did}/retry', { params: { path: { ...path, did: d.id } } })));
    if (r !== undefined) {
      toast(t.requeued);
      void refetch();
    }
  };

  return (
    <>
      <form class="card" novalidate onSubmit={submit}>
        <Field label={t.url} hint={t.urlHint} errors={errors.url()}>
          {(a) => (
            <input {...a} name="webhookUrl" type="url" value={url()} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://notes.example.com/hooks/gatehouse" />
          )}
        </Field>
        <Field label={t.secret} hint={t.secretHint} errors={errors.secret()}>
          {(a) => (
            <input
              {...a}
              name="webhookSecret"
              type="password"
              value={secret()}
              onInput={(e) => setSecret(e.currentTarget.value)}
              placeholder={props.app.webhookSecretSet ? t.secretSet : t.secretEmpty}
            />
          )}
        </Field>
        <Show when={shownSecret()}>
          {(s) => (
            <div class="notice">
              {t.generated}
              <CopyField label={t.secretLabel} value={s()} secret />
            </div>
          )}
        </Show>
        <ErrorBox error={save.error()} fieldsShown />
        <div class="actions">
          <button type="button" onClick={test} disabled={!props.app.webhookUrl}>
            {t.test}
          </button>
          <button class="primary" type="submit" disabled={save.busy() || !valid()}>
            {t.save}
          </button>
        </div>
      </form>
      <div class="row title-row">
        <h2>{t.recent}</h2>
        <button type="button" class="small" onClick={() => void refetch()}>
          {t.refresh}
        </button>
      </div>
      <ErrorBox error={row.error()} />
      <Async resource={deliveries}>
        {(list) => (
          <ListTable label={t.table} rows={list} columns={t.columns} empty={<>{t.empty}</>}>
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
                      {t.retry}
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
