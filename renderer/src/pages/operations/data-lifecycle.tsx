/**
 * Data lifecycle (GET /api/admin/operations): the retention sweeper — its schedule, its last pass
 * and what that pass deleted, how long each kind of ended data is kept — with "Run now"
 * (POST /api/admin/operations/sweep, followed until the pass ends), and the big deletes still
 * removing rows in the background.
 */
import { createResource, For, onCleanup, Show } from 'solid-js';
import { client, ok } from '../../api';
import { Async, DataTable, Empty, ErrorBox, toast, useAction, when } from '../../ui';

const t = {
  title: 'Data lifecycle',
  intro: 'Ended data is deleted off the request path, in small batches: the sweeper by the retention rules below, and the rows of deleted applications, groups and members in the background.',
  sweeper: 'Retention sweeper',
  every: (s: number) => `Runs every ${s >= 3600 && s % 3600 === 0 ? `${s / 3600} hour${s === 3600 ? '' : 's'}` : `${s} seconds`} (GATEHOUSE_SWEEP_INTERVAL).`,
  off: 'The schedule is off (GATEHOUSE_SWEEP_INTERVAL=0); a pass runs only when started here.',
  running: 'A pass is running now…',
  nextRun: 'Next pass: ',
  lastRun: 'Last pass: ',
  noRunYet: 'No pass yet.',
  took: (ms: number) => ` (${ms} ms)`,
  deleted: (n: number) => `${n} row${n === 1 ? '' : 's'} deleted`,
  nothingDeleted: 'nothing was due',
  vacuumed: (pages: number) => `, ${pages} page${pages === 1 ? '' : 's'} handed back to the file system`,
  failed: (error: string) => `Stopped: ${error}`,
  totals: (runs: number, rows: number) => `${runs} pass${runs === 1 ? '' : 'es'} so far, ${rows} row${rows === 1 ? '' : 's'} deleted in all.`,
  pruned: 'Deleted by the last pass',
  prunedColumns: ['Rule', 'Rows'],
  runNow: 'Run now',
  starting: 'Starting…',
  started: 'Sweep started.',
  finished: 'Sweep finished.',
  retention: 'How long ended data is kept',
  retentionColumns: ['Data', 'Kept after it ends', 'Setting'],
  kinds: [
    ['tokens', 'Refresh tokens and one-time links', 'GATEHOUSE_RETENTION_TOKENS_DAYS'],
    ['sessions', 'Sessions', 'GATEHOUSE_RETENTION_SESSIONS_DAYS'],
    ['webhooks', 'Webhook deliveries', 'GATEHOUSE_RETENTION_WEBHOOKS_DAYS'],
    ['audit', 'Audit log entries', 'GATEHOUSE_RETENTION_AUDIT_DAYS'],
    ['invitations', 'Invitations', 'GATEHOUSE_RETENTION_INVITATIONS_DAYS'],
  ] as const,
  days: (n: number) => (n === 0 ? 'for ever' : `${n} day${n === 1 ? '' : 's'}`),
  deletions: 'Deletes under way',
  deletionsColumns: ['What', 'Requested', 'By', 'Removed so far'],
  noDeletions: 'No deletes under way: every deleted application, group and member is gone entirely.',
  kind: { application: 'Application', sso_group: 'SSO group', membership: 'Member' } as Record<string, string>,
};

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

export function OperationsPage() {
  const [data, { refetch }] = createResource(() => ok(client.GET('/api/admin/operations')));
  const sweep = useAction();
  // While a pass runs (started here, or by the schedule), look again every second.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const follow = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const now = await refetch();
      if (now?.sweeper.running) follow();
      else toast(t.finished);
    }, 1000);
  };
  onCleanup(() => clearTimeout(timer));
  const runNow = async () => {
    const status = await sweep.run(() => ok(client.POST('/api/admin/operations/sweep')));
    if (!status) return;
    toast(t.started);
    void refetch();
    follow();
  };

  return (
    <>
      <h1>{t.title}</h1>
      <p class="muted">{t.intro}</p>
      <Async resource={data}>
        {(ops) => (
          <>
            <section class="card" aria-labelledby="sweeper">
              <h2 id="sweeper">{t.sweeper}</h2>
              <p>{ops.sweeper.intervalSeconds ? t.every(ops.sweeper.intervalSeconds) : t.off}</p>
              <Show when={ops.sweeper.running}>
                <p class="notice" role="status">
                  {t.running}
                </p>
              </Show>
              <Show when={ops.sweeper.nextRunAt}>
                {(next) => (
                  <p>
                    {t.nextRun}
                    <strong>{when(next())}</strong>
                  </p>
                )}
              </Show>
              <p data-testid="sweeper-last-run">
                <Show when={ops.sweeper.lastRun} fallback={t.noRunYet}>
                  {(run) => (
                    <>
                      {t.lastRun}
                      {when(run().finishedAt)}
                      {t.took(run().durationMs)}: {run().total ? t.deleted(run().total) : t.nothingDeleted}
                      {run().vacuumedPages ? t.vacuumed(run().vacuumedPages) : ''}.
                    </>
                  )}
                </Show>
              </p>
              <Show when={ops.sweeper.lastRun?.error}>{(error) => <p class="notice">{t.failed(error())}</p>}</Show>
              <p class="muted">{t.totals(ops.sweeper.runs, ops.sweeper.prunedTotal)}</p>
              <ErrorBox error={sweep.error()} />
              <button type="button" class="primary" onClick={runNow} disabled={sweep.busy() || ops.sweeper.running}>
                {sweep.busy() ? t.starting : t.runNow}
              </button>
            </section>
            <Show when={ops.sweeper.lastRun && Object.keys(ops.sweeper.lastRun.pruned).length}>
              <h2>{t.pruned}</h2>
              <DataTable label={t.pruned} columns={t.prunedColumns} rows={Object.entries(ops.sweeper.lastRun!.pruned)}>
                {([rule, rows]) => (
                  <tr>
                    <td>{rule}</td>
                    <td>{rows}</td>
                  </tr>
                )}
              </DataTable>
            </Show>
            <h2>{t.retention}</h2>
            <DataTable label={t.retention} columns={t.retentionColumns} rows={t.kinds}>
              {([key, label, setting]) => (
                <tr>
                  <td>{label}</td>
                  <td>{t.days(ops.sweeper.retentionDays[key])}</td>
                  <td>
                    <code>{setting}</code>
                  </td>
                </tr>
              )}
            </DataTable>
            <h2>{t.deletions}</h2>
            <Show when={ops.deletions.length} fallback={<Empty>{t.noDeletions}</Empty>}>
              <DataTable label={t.deletions} columns={t.deletionsColumns} rows={ops.deletions}>
                {(d) => (
                  <tr data-deletion={d.target}>
                    <td>
                      {t.kind[d.kind] ?? d.kind} <code>{d.target}</code>
                    </td>
                    <td>{when(d.requestedAt)}</td>
                    <td>{d.requestedBy}</td>
                    <td>
                      <For each={Object.entries(d.removed)}>{([what, n], i) => <>{i() ? ', ' : ''}{`${n} ${what}`}</>}</For>
                      <Show when={!Object.keys(d.removed).length}>{sum(d.removed)}</Show>
                    </td>
                  </tr>
                )}
              </DataTable>
            </Show>
          </>
        )}
      </Async>
    </>
  );
}
