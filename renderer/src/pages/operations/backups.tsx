/** Backups: the schedule (last and next run), whether backups are encrypted, take one now, download. */
import { createResource, For, Show } from 'solid-js';
import { client, ok, type Backup } from '../../api';
import { Async, Empty, ErrorBox, DataTable, toast, useAction, when } from '../../ui';

const t = {
  title: 'Backups',
  intro: 'A backup holds the database and the LAN certificates. It does not hold the admin token: a restored server makes a new one.',
  status: 'Schedule',
  every: (hours: number, keep: number) => `Every ${hours} hours; the newest ${keep} backups are kept in the data directory.`,
  off: 'Automatic backups are off (GATEHOUSE_BACKUP_INTERVAL=0).',
  offNoSecret: 'Automatic backups are off until a passphrase or key file is set (below).',
  lastRun: 'Last scheduled run: ',
  lastFailed: (error: string) => ` — failed: ${error}`,
  lastOk: ' — written',
  noRunYet: 'No scheduled run yet since the server started.',
  nextRun: 'Next run: ',
  lastBackup: 'Newest backup: ',
  none: 'none yet',
  encrypted: (how: 'passphrase' | 'key-file' | null) =>
    how === 'key-file' ? 'Encrypted with the key file in GATEHOUSE_BACKUP_KEY_FILE.' : 'Encrypted with the passphrase in GATEHOUSE_BACKUP_PASSPHRASE.',
  notEncrypted:
    'No passphrase or key file: the server takes no backups, since they hold the signing keys. Set GATEHOUSE_BACKUP_PASSPHRASE or GATEHOUSE_BACKUP_KEY_FILE and restart it.',
  take: 'Take a backup now',
  taking: 'Taking a backup…',
  taken: (id: string) => `Backup ${id} written.`,
  table: 'Stored backups',
  columns: ['Backup', 'Taken', 'Size', 'Encrypted', ''],
  empty: 'No backups yet.',
  yes: 'yes',
  no: 'no',
  download: 'Download',
  downloadOf: (id: string) => `Download ${id}`,
  size: (bytes: number) => (bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} kB`),
};

/** Downloads through the API client (the request needs the admin token), then hands the file to the browser. */
async function download(b: Backup): Promise<void> {
  const blob = await ok(client.GET('/api/admin/backups/{id}/download', { params: { path: { id: b.id } }, parseAs: 'blob' }));
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = `${b.id}.gatehouse-backup`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function BackupsPage() {
  const [data, { refetch }] = createResource(async () => {
    const [list, status] = await Promise.all([ok(client.GET('/api/admin/backups')), ok(client.GET('/api/admin/backups/status'))]);
    return { backups: list.backups, status };
  });
  const take = useAction();
  const row = useAction();
  const takeNow = async () => {
    const r = await take.run(() => ok(client.POST('/api/admin/backups')));
    if (r) {
      toast(t.taken(r.id));
      void refetch();
    }
  };
  return (
    <>
      <h1>{t.title}</h1>
      <p class="muted">{t.intro}</p>
      <Async resource={data}>
        {({ backups, status }) => (
          <>
            <section class="card" aria-labelledby="backup-status">
              <h2 id="backup-status">{t.status}</h2>
              <p>{status.scheduled ? t.every(Math.round(status.intervalSeconds / 3600), status.keep) : status.passphraseSet ? t.off : t.offNoSecret}</p>
              <Show when={status.scheduled}>
                <p>
                  <Show when={status.lastRun} fallback={t.noRunYet}>
                    {(run) => (
                      <>
                        {t.lastRun}
                        {when(run().at)}
                        {run().ok ? t.lastOk : t.lastFailed(run().error ?? '')}
                      </>
                    )}
                  </Show>
                </p>
                <p>
                  {t.nextRun}
                  <strong>{when(status.nextRunAt)}</strong>
                </p>
              </Show>
              <p>
                {t.lastBackup}
                {status.lastBackupAt ? when(status.lastBackupAt) : t.none}
              </p>
              <p class={status.passphraseSet ? '' : 'notice'} data-testid="passphrase-status">
                {status.passphraseSet ? t.encrypted(status.encryption) : t.notEncrypted}
              </p>
              <ErrorBox error={take.error()} />
              <button type="button" class="primary" onClick={takeNow} disabled={take.busy() || !status.passphraseSet}>
                {take.busy() ? t.taking : t.take}
              </button>
            </section>
            <ErrorBox error={row.error()} />
            <Show when={backups.length} fallback={<Empty>{t.empty}</Empty>}>
              <DataTable label={t.table} columns={t.columns} rows={backups}>
                {(b) => (
                  <tr data-backup={b.id}>
                    <td>
                      <code>{b.id}</code>
                    </td>
                    <td>{when(b.createdAt)}</td>
                    <td>{t.size(b.size)}</td>
                    <td>{b.encrypted ? t.yes : t.no}</td>
                    <td>
                      <button type="button" class="small" aria-label={t.downloadOf(b.id)} onClick={() => void row.run(() => download(b))}>
                        {t.download}
                      </button>
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
