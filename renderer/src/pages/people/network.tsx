/**
 * One person's network access (spec radius.md): their RADIUS sessions of the last 30 days (Wi-Fi,
 * VPN, as the gear reported them) and their network certificates for EAP-TLS, each revocable.
 */
import { createResource, Show } from 'solid-js';
import { client, ok } from '../../api';
import { confirmAction, DataTable, ErrorBox, toast, useAction, when } from '../../ui';

const t = {
  sessions: 'Wi-Fi and VPN sessions (RADIUS, 30 days)',
  noSessions: 'No RADIUS sessions.',
  sessionColumns: ['Application', 'Gear', 'Device', 'Started', 'Last report', 'Ended', 'Data'],
  certificates: 'Network certificates',
  noCertificates: 'No network certificates. People make them on their account page.',
  certificateColumns: ['Name', 'Application', 'Expires', 'Last used', 'State', ''],
  revoke: 'Revoke',
  revokeTitle: 'Revoke this network certificate?',
  revokeText: 'The device using it is refused from its next connection.',
  revoked: 'Network certificate revoked.',
  state: (revokedAt: string | null) => (revokedAt ? `revoked ${when(revokedAt)}` : 'valid'),
  bytes: (n: number) => (n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`),
};

export function PersonNetwork(props: { personId: string }) {
  const path = () => ({ id: props.personId });
  const [sessions] = createResource(path, (p) => ok(client.GET('/api/admin/people/{id}/radius-sessions', { params: { path: p } })));
  const [certificates, { refetch }] = createResource(path, (p) => ok(client.GET('/api/admin/people/{id}/network-certificates', { params: { path: p } })));
  const revoke = useAction();
  const revokeOne = async (certificateId: string) => {
    if (!(await confirmAction(t.revokeTitle, t.revokeText, t.revoke))) return;
    const done = await revoke.run(() => ok(client.DELETE('/api/admin/people/{id}/network-certificates/{certificateId}', { params: { path: { id: props.personId, certificateId } } })));
    if (done === undefined && revoke.error()) return;
    toast(t.revoked);
    void refetch();
  };
  return (
    <>
      <h2>{t.sessions}</h2>
      <Show when={sessions.latest}>
        {(list) => (
          <Show when={list().radiusSessions.length} fallback={<p class="muted">{t.noSessions}</p>}>
            <DataTable label={t.sessions} columns={t.sessionColumns} rows={list().radiusSessions}>
              {(s) => (
                <tr>
                  <td>{s.applicationName}</td>
                  <td>{s.client}</td>
                  <td>{s.callingStationId ?? ''}</td>
                  <td>{when(s.startedAt)}</td>
                  <td>{when(s.updatedAt)}</td>
                  <td>{s.stoppedAt ? when(s.stoppedAt) : ''}</td>
                  <td>{t.bytes(s.inputOctets + s.outputOctets)}</td>
                </tr>
              )}
            </DataTable>
          </Show>
        )}
      </Show>
      <h2>{t.certificates}</h2>
      <ErrorBox error={revoke.error()} />
      <Show when={certificates.latest}>
        {(list) => (
          <Show when={list().networkCertificates.length} fallback={<p class="muted">{t.noCertificates}</p>}>
            <DataTable label={t.certificates} columns={t.certificateColumns} rows={list().networkCertificates}>
              {(c) => (
                <tr>
                  <td>{c.name}</td>
                  <td>{c.applicationName}</td>
                  <td>{when(c.notAfter)}</td>
                  <td>{when(c.lastUsedAt)}</td>
                  <td>{t.state(c.revokedAt)}</td>
                  <td>
                    <Show when={!c.revokedAt}>
                      <button type="button" class="danger" disabled={revoke.busy()} onClick={() => void revokeOne(c.id)}>
                        {t.revoke}
                      </button>
                    </Show>
                  </td>
                </tr>
              )}
            </DataTable>
          </Show>
        )}
      </Show>
    </>
  );
}
