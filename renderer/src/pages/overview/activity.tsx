/**
 * Activity at a glance: sign-ins, failed sign-ins and active people per day over 30 days, for the
 * whole installation (overview) or one application. Read from the server's daily counters
 * (`/api/admin/activity`), never from the audit log.
 */
import { createResource, Show } from 'solid-js';
import { client, ok } from '../../api';
import { TimeChart } from '../../chart';
import { Async } from '../../ui';

const DAYS = 30;

const t = {
  title: (days: number) => `Activity, last ${days} days (UTC)`,
  signIns: 'Sign-ins',
  failed: 'Failed sign-ins',
  active: 'Active people',
  signInSummary: (ok: number, failed: number, busiest: string | undefined) =>
    `${ok} sign-in${ok === 1 ? '' : 's'} and ${failed} failed${busiest ? `; busiest day ${busiest}` : ''}.`,
  activeSummary: (today: number, peak: number, peakDay: string | undefined) =>
    `${today} active today${peakDay ? `; at most ${peak} on one day (${peakDay})` : ''}.`,
  nothing: 'No sign-ins in this period yet. Counting started when this version was installed.',
};

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
function peak(days: string[], values: number[]): [number, string | undefined] {
  let best = 0;
  let day: string | undefined;
  values.forEach((v, i) => {
    if (v > best) [best, day] = [v, days[i]];
  });
  return [best, day];
}

export function ActivityPanel(props: { applicationId?: string }) {
  const [data] = createResource(
    () => props.applicationId ?? '',
    (id) =>
      id
        ? ok(client.GET('/api/admin/applications/{id}/activity', { params: { path: { id }, query: { days: DAYS } } }))
        : ok(client.GET('/api/admin/activity', { params: { query: { days: DAYS } } })),
  );
  return (
    <section class="card activity" aria-label={t.title(DAYS)} data-testid="activity">
      <h2>{t.title(DAYS)}</h2>
      <Async resource={data}>
        {(a) => {
          const days = a.days.map((d) => d.date);
          const signIns = a.days.map((d) => d.signIns);
          const failed = a.days.map((d) => d.failedSignIns);
          const active = a.days.map((d) => d.activePeople);
          const [, busiest] = peak(days, signIns.map((v, i) => v + failed[i]!));
          const [top, topDay] = peak(days, active);
          return (
            <>
              <Show when={sum(signIns) + sum(failed) + sum(active) === 0}>
                <p class="muted">{t.nothing}</p>
              </Show>
              <div class="charts">
                <TimeChart
                  title={t.signIns}
                  summary={t.signInSummary(sum(signIns), sum(failed), busiest)}
                  days={days}
                  series={[
                    { label: t.signIns, values: signIns, color: '--chart-1' },
                    { label: t.failed, values: failed, color: '--chart-2' },
                  ]}
                />
                <TimeChart
                  title={t.active}
                  summary={t.activeSummary(active[active.length - 1] ?? 0, top, topDay)}
                  days={days}
                  series={[{ label: t.active, values: active, color: '--chart-3', fill: true }]}
                />
              </div>
            </>
          );
        }}
      </Async>
    </section>
  );
}
