import { createResource, For, Show } from 'solid-js';
import { A } from '@solidjs/router';
import { client, ok } from '../../api';
import { managesPeople, may } from '../../me';
import { Async, CopyField } from '../../ui';
import { ActivityPanel } from './activity-lazy';

const t = {
  title: 'Overview',
  firstRun: 'Connect your first application',
  firstRunSteps: [
    'New application: pick the app you are connecting (Grafana, Nextcloud, Jellyfin… or something else).',
    'Paste the set-up text it shows into the app.',
    'Test sign-in: sign in as the app would, and see the tokens and checks it gets.',
  ],
  firstRunButton: 'New application',
  counts: 'Counts',
  labels: {
    applications: 'Applications',
    people: 'People',
    memberships: 'Memberships',
    pendingInvitations: 'Pending invitations',
    ssoGroups: 'Shared sign-in',
  },
  installation: 'This installation',
  issuer: 'Issuer',
  discovery: 'Discovery URL',
  jwks: 'JWKS URL',
  version: 'Version ',
  up: (uptime: string) => ` · up ${uptime} · signing key `,
  noKey: 'not created yet (made on first token)',
  openDiscovery: 'Open discovery document',
  openJwks: 'Open JWKS',
  caLink: 'Download the local CA certificate (install it on each device)',
  ldap: 'LDAP directory',
  ldapOff: 'Off: start the server with GATEHOUSE_LDAP=on (or --ldap) to serve it.',
  ldapOn: (connections: number, startTls: boolean) => `${startTls ? 'StartTLS offered' : 'no TLS'} · ${connections} connection${connections === 1 ? '' : 's'} open`,
  baseDn: 'Base DN',
  ldapUrl: 'LDAP URL',
  ldapsUrl: 'LDAPS URL',
  radius: 'RADIUS',
  radiusOff: 'Off: start the server with GATEHOUSE_RADIUS=on (or --radius) for the Wi-Fi, the VPN and network gear.',
  radiusAuth: 'Authentication (UDP)',
  radiusAcct: 'Accounting (UDP)',
  radiusOn: (conversations: number) => `${conversations} EAP conversation${conversations === 1 ? '' : 's'} in progress`,
  uptime: (s: number) => {
    const d = Math.floor(s / 86400),
      h = Math.floor((s % 86400) / 3600),
      m = Math.floor((s % 3600) / 60);
    return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : `${m} min ${s % 60} s`;
  },
};

export function OverviewPage() {
  const [data] = createResource(() => ok(client.GET('/api/admin/overview')));
  return (
    <>
      <h1>{t.title}</h1>
      <Async resource={data}>
        {(o) => (
          <>
            {/* First run (issue 44, m9): nothing is connected yet, so the next step is the page's first thing. */}
            <Show when={o.counts.applications === 0 && may('POST /applications')}>
              <section class="card cta" aria-labelledby="first-run-title" data-testid="first-run">
                <h2 id="first-run-title">{t.firstRun}</h2>
                <ol>
                  <For each={t.firstRunSteps}>{(step) => <li>{step}</li>}</For>
                </ol>
                <A class="button primary" href="/applications/new">
                  {t.firstRunButton}
                </A>
              </section>
            </Show>
            <div class="grid" role="group" aria-label={t.counts}>
              <For each={Object.keys(t.labels) as (keyof typeof t.labels)[]}>
                {(key) => (
                  <div class="stat">
                    <span class="n">{o.counts[key]}</span>
                    <span class="muted">{t.labels[key]}</span>
                  </div>
                )}
              </For>
            </div>
            {/* Installation-wide activity is people data: app managers see their applications' own. */}
            <Show when={managesPeople()}>
              <ActivityPanel />
            </Show>
            <h2>{t.installation}</h2>
            <div class="card">
              <CopyField label={t.issuer} value={o.issuer} />
              <CopyField label={t.discovery} value={o.discoveryUrl} />
              <CopyField label={t.jwks} value={o.jwksUrl} />
              <p>
                {t.version}
                <strong>{o.version}</strong>
                {t.up(t.uptime(o.uptimeSeconds))}
                {o.signingKey ? <A href="/signing-keys"><code>{o.signingKey}</code></A> : <span class="muted">{t.noKey}</span>}
              </p>
              <p class="row">
                <a href={o.discoveryUrl} target="_blank" rel="noreferrer">
                  {t.openDiscovery}
                </a>
                <a href={o.jwksUrl} target="_blank" rel="noreferrer">
                  {t.openJwks}
                </a>
                {o.caCertificateUrl && <A href="/lan-tls">{t.caLink}</A>}
              </p>
            </div>
            <h2>{t.ldap}</h2>
            <div class="card" data-testid="ldap-status">
              {o.ldap.enabled ? (
                <>
                  {o.ldap.url && <CopyField label={t.ldapUrl} value={o.ldap.url} />}
                  {o.ldap.ldapsUrl && <CopyField label={t.ldapsUrl} value={o.ldap.ldapsUrl} />}
                  <CopyField label={t.baseDn} value={o.ldap.baseDn} />
                  <p class="hint">{t.ldapOn(o.ldap.connections, o.ldap.startTls)}</p>
                </>
              ) : (
                <p class="muted">{t.ldapOff}</p>
              )}
            </div>
            <h2>{t.radius}</h2>
            <div class="card" data-testid="radius-status">
              {o.radius.enabled ? (
                <>
                  {o.radius.auth && <CopyField label={t.radiusAuth} value={o.radius.auth} />}
                  {o.radius.accounting && <CopyField label={t.radiusAcct} value={o.radius.accounting} />}
                  <p class="hint">{t.radiusOn(o.radius.conversations)}</p>
                </>
              ) : (
                <p class="muted">{t.radiusOff}</p>
              )}
            </div>
          </>
        )}
      </Async>
    </>
  );
}
