/** Signing keys: the keys in the JWKS and their state, the rotation schedule, and "Rotate now". */
import { createResource, For, Show } from 'solid-js';
import { client, ok } from '../../api';
import { Async, confirmAction, ErrorBox, DataTable, toast, useAction, when } from '../../ui';

const t = {
  title: 'Signing keys',
  intro: 'Access and ID tokens are signed with the active key. Apps verify them with the public keys in the JWKS, which keeps a rotated key until the tokens it signed have expired.',
  schedule: 'Schedule',
  every: (days: number) => `Rotated automatically every ${days} days (GATEHOUSE_KEY_ROTATION_DAYS).`,
  next: 'Next scheduled rotation: ',
  noSchedule: 'No schedule runs in this process (it runs in `gatehouse serve`).',
  activeSince: 'Active key since: ',
  rotate: 'Rotate now',
  rotating: 'Rotating…',
  rotateTitle: 'Rotate the signing key now?',
  rotateText:
    'A new key is published in the JWKS now and signs two minutes later, once verifiers that cache the JWKS have fetched it. The current one signs until then and stays in the JWKS until the tokens it signed have expired, so nothing breaks.',
  rotateAction: 'Rotate',
  rotated: (kid: string, at: string) => `New signing key ${kid}: published now, signs from ${at}.`,
  table: 'Signing keys',
  columns: ['Key id', 'Algorithm', 'State', 'Created', 'Signs from', 'Stops signing', 'Leaves the JWKS'],
  states: { next: 'published, signs soon', active: 'signing', retiring: 'published, no longer signing', retired: 'retired' } as Record<string, string>,
};

export function KeysPage() {
  const [data, { refetch }] = createResource(async () => {
    const [keys, schedule] = await Promise.all([ok(client.GET('/api/admin/keys')), ok(client.GET('/api/admin/keys/schedule'))]);
    return { keys: keys.keys, schedule };
  });
  const action = useAction();
  const rotate = async () => {
    if (!(await confirmAction(t.rotateTitle, t.rotateText, t.rotateAction))) return;
    const r = await action.run(() => ok(client.POST('/api/admin/keys/rotate')));
    if (r) {
      toast(t.rotated(r.key.kid, when(r.key.activatesAt)));
      void refetch();
    }
  };
  return (
    <>
      <h1>{t.title}</h1>
      <p class="muted">{t.intro}</p>
      <Async resource={data}>
        {({ keys, schedule }) => (
          <>
            <section class="card" aria-labelledby="key-schedule">
              <h2 id="key-schedule">{t.schedule}</h2>
              <p>{t.every(schedule.rotationDays)}</p>
              <Show when={schedule.activeSince}>
                <p>
                  {t.activeSince}
                  {when(schedule.activeSince)}
                </p>
              </Show>
              <p data-testid="next-rotation">
                <Show when={schedule.nextRotationAt} fallback={t.noSchedule}>
                  {t.next}
                  <strong>{when(schedule.nextRotationAt)}</strong>
                </Show>
              </p>
              <ErrorBox error={action.error()} />
              <button type="button" class="primary" onClick={rotate} disabled={action.busy()}>
                {action.busy() ? t.rotating : t.rotate}
              </button>
            </section>
            <DataTable label={t.table} columns={t.columns} rows={keys}>
              {(k) => (
                <tr data-kid={k.kid}>
                  <td>
                    <code>{k.kid}</code>
                  </td>
                  <td>{k.alg}</td>
                  <td>
                    <span class={`badge ${k.status === 'active' ? 'ok' : k.status === 'retiring' || k.status === 'next' ? 'warn' : ''}`}>{t.states[k.status] ?? k.status}</span>
                  </td>
                  <td>{when(k.createdAt)}</td>
                  <td>{when(k.activatesAt)}</td>
                  <td>{when(k.retiredAt)}</td>
                  <td>{when(k.expiresAt)}</td>
                </tr>
              )}
            </DataTable>
          </>
        )}
      </Async>
    </>
  );
}
