import { createResource, For } from 'solid-js';
import { api, type Overview } from '../api';
import { Async, CopyField } from '../ui';

function uptime(s: number): string {
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : `${m} min ${s % 60} s`;
}

export function OverviewPage() {
  const [data] = createResource(() => api.get<Overview>('/api/admin/overview'));
  return (
    <>
      <h1>Overview</h1>
      <Async resource={data}>
        {(o) => (
          <>
            <div class="grid" aria-label="Counts">
              <For
                each={[
                  ['Applications', o.counts.applications],
                  ['People', o.counts.people],
                  ['Memberships', o.counts.memberships],
                  ['Pending invitations', o.counts.pendingInvitations],
                  ['SSO groups', o.counts.ssoGroups],
                ] as const}
              >
                {([label, n]) => (
                  <div class="stat">
                    <div class="n">{n}</div>
                    <div class="muted">{label}</div>
                  </div>
                )}
              </For>
            </div>
            <h2>This installation</h2>
            <div class="card">
              <CopyField label="Issuer" value={o.issuer} />
              <CopyField label="Discovery URL" value={o.discoveryUrl} />
              <CopyField label="JWKS URL" value={o.jwksUrl} />
              {o.caFingerprint && <CopyField label="Local CA fingerprint (SHA-256)" value={o.caFingerprint} />}
              <p>
                Version <strong>{o.version}</strong> · up {uptime(o.uptimeSeconds)} · signing key{' '}
                {o.signingKey ? <code>{o.signingKey}</code> : <span class="muted">not created yet (made on first token)</span>}
              </p>
              <p class="row">
                <a href={o.discoveryUrl} target="_blank" rel="noreferrer">
                  Open discovery document
                </a>
                <a href={o.jwksUrl} target="_blank" rel="noreferrer">
                  Open JWKS
                </a>
                {o.caCertificateUrl && (
                  <a href={o.caCertificateUrl} download="gatehouse-ca.pem">
                    Download the local CA certificate (install it on each device)
                  </a>
                )}
              </p>
            </div>
          </>
        )}
      </Async>
    </>
  );
}
