/**
 * LAN TLS: the local CA devices install (fingerprint, expiry, what its name constraints let it
 * vouch for, whether to renew it and "Renew", a QR code of where to fetch it, over plain http when
 * the redirect port is on) and the served certificate's names and expiry.
 */
import { createResource, For, Show } from 'solid-js';
import { client, ok } from '../../api';
import { Async, confirmAction, CopyField, Empty, ErrorBox, toast, useAction, when } from '../../ui';

const t = {
  title: 'LAN TLS',
  off: 'HTTPS is off. Start the server with GATEHOUSE_TLS=auto to serve HTTPS on the LAN with a local certificate authority that each device installs once.',
  own: 'HTTPS uses your own certificate (GATEHOUSE_TLS_CERT / GATEHOUSE_TLS_KEY); there is no local certificate authority to install.',
  ca: 'Certificate authority',
  caIntro: 'Install this certificate on each device that signs in through Gatehouse. Before trusting it, check that the fingerprint the device shows is this one.',
  fingerprint: 'SHA-256 fingerprint',
  validUntil: 'Valid until ',
  download: 'Download the CA certificate',
  qr: 'Scan on a phone or tablet: the trust page says how each kind of device installs the CA.',
  trustPage: 'Trust page',
  qrAlt: (url: string) => `QR code for ${url}`,
  plainHttp: 'Over plain http (for devices that do not trust the CA yet)',
  https: 'Over HTTPS',
  noPlainHttp: 'Set GATEHOUSE_HTTP_REDIRECT_PORT to offer the CA over plain http as well, for devices that cannot open the HTTPS address before trusting it.',
  certificate: 'Server certificate',
  names: 'Names',
  addresses: 'Addresses',
  expires: 'Expires ',
  renews: (at: string) => ` · re-issued automatically by ${at} at the latest`,
  scope: 'This CA can vouch only for: ',
  noScope: 'This CA was made by an older Gatehouse without name constraints: anyone with its key can make certificates your devices accept for any site. Renew it, install the new one on every device and remove this one.',
  due: 'Renew this CA soon: it expires within 60 days.',
  uncovered: (names: string) => `Not covered by this CA (left out of the server certificate until it is renewed): ${names}.`,
  renew: 'Renew the CA',
  renewTitle: 'Renew the certificate authority?',
  renewText:
    'A new CA (new key, the current names and addresses, two years) replaces this one at once. Every device must install the new CA; until it does, it refuses this server. Remove the old CA from the devices afterwards.',
  renewAction: 'Renew',
  renewed: (fingerprint: string) => `New CA ${fingerprint}: install it on every device.`,
  acme: 'Certificate from ACME',
  acmeIntro: 'GATEHOUSE_TLS=acme: a public certificate for your domain, proved through your DNS server (DNS-01, RFC 2136). The local certificate serves until the first one arrives.',
  acmeStatus: { pending: 'Waiting for the first certificate', valid: 'Valid', failed: 'The last attempt failed' },
  acmeDomains: 'Domains: ',
  acmeRenewsAt: (at: string) => `Renews by itself on ${at} (a third of its lifetime before it ends).`,
  acmeError: 'Why: ',
  acmeKeeps: 'The current certificate keeps serving; Gatehouse tries again by itself.',
  acmeRenew: 'Renew now',
  acmeRequested: 'Asked the ACME server for a certificate; this screen shows the result.',
};

export function TlsPage() {
  const [tls, { mutate, refetch }] = createResource(() => ok(client.GET('/api/admin/tls')));
  // The QR code of trust.url, drawn by the server (GET /api/admin/tls/trust-qr.svg); refetched after a CA renewal.
  const [qr, { refetch: refetchQr }] = createResource(
    () => tls()?.trust?.fingerprintSha256,
    async () => ok(client.GET('/api/admin/tls/trust-qr.svg', { parseAs: 'text' })) as Promise<string>,
  );
  const renewal = useAction();
  const acmeRenewal = useAction();
  const renewAcme = async () => {
    const state = await acmeRenewal.run(() => ok(client.POST('/api/admin/tls/acme/renew')));
    if (!state) return;
    toast(t.acmeRequested);
    // The attempt takes seconds: read the state again a little later.
    setTimeout(() => void refetch(), 3000);
  };
  const renew = async () => {
    if (!(await confirmAction(t.renewTitle, t.renewText, t.renewAction))) return;
    const next = await renewal.run(() => ok(client.POST('/api/admin/tls/ca/renew')));
    if (next) {
      mutate(next);
      void refetchQr();
      toast(t.renewed(next.ca?.fingerprint ?? ''));
    }
  };
  return (
    <>
      <h1>{t.title}</h1>
      <Async resource={tls}>
        {(s) => (
          <>
            <Show when={s.mode === 'off'}>
              <Empty>{t.off}</Empty>
            </Show>
            <Show when={s.mode === 'files'}>
              <p class="muted">{t.own}</p>
            </Show>
            <Show when={s.ca}>
              {(ca) => {
                const target = s.trust?.url ?? '';
                return (
                  <section class="card" aria-labelledby="tls-ca">
                    <h2 id="tls-ca">{t.ca}</h2>
                    <p>{t.caIntro}</p>
                    <CopyField label={t.fingerprint} value={ca().fingerprint} />
                    <p>
                      {t.validUntil}
                      {when(ca().notAfter)}
                    </p>
                    <Show when={s.caNameConstraints} fallback={<p class="notice" data-testid="ca-unconstrained">{t.noScope}</p>}>
                      {(scope) => (
                        <p data-testid="ca-scope">
                          {t.scope}
                          <For each={[...scope().dns, ...scope().ips]}>{(n, i) => <>{i() > 0 ? ', ' : ''}<code>{n}</code></>}</For>
                        </p>
                      )}
                    </Show>
                    <Show when={s.uncovered.length}>
                      <p class="notice" data-testid="ca-uncovered">{t.uncovered(s.uncovered.join(', '))}</p>
                    </Show>
                    <Show when={s.caRenewalDue && s.caNameConstraints && !s.uncovered.length}>
                      <p class="notice">{t.due}</p>
                    </Show>
                    <ErrorBox error={renewal.error()} />
                    <p>
                      <button type="button" class={s.caRenewalDue ? 'primary' : ''} onClick={renew} disabled={renewal.busy()}>
                        {t.renew}
                      </button>
                    </p>
                    <div class="qr-row">
                      <Show when={qr()}>
                        {(svg) => <img class="qr" src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg())}`} alt={t.qrAlt(target)} width="180" height="180" data-testid="trust-qr" />}
                      </Show>
                      <div>
                        <p>{t.qr}</p>
                        <Show when={s.trust}>{(trust) => <CopyField label={t.trustPage} value={trust().url} />}</Show>
                        <Show when={s.trust?.plainHttpUrl}>{(url) => <CopyField label={`${t.trustPage} — ${t.plainHttp}`} value={url()} />}</Show>
                        <Show when={s.plainHttpCaUrl} fallback={<p class="hint">{t.noPlainHttp}</p>}>
                          {(url) => <CopyField label={t.plainHttp} value={url()} />}
                        </Show>
                        <Show when={s.caUrl}>{(url) => <CopyField label={t.https} value={url()} />}</Show>
                        <Show when={s.caUrl}>
                          {(url) => (
                            <p>
                              <a href={url()} download="gatehouse-ca.pem">
                                {t.download}
                              </a>
                            </p>
                          )}
                        </Show>
                      </div>
                    </div>
                  </section>
                );
              }}
            </Show>
            <Show when={s.acme}>
              {(acme) => (
                <section class="card" aria-labelledby="tls-acme" data-testid="tls-acme">
                  <h2 id="tls-acme">{t.acme}</h2>
                  <p class="muted">{t.acmeIntro}</p>
                  <p>
                    <strong data-testid="acme-status">{t.acmeStatus[acme().status]}</strong>
                    {acme().notAfter ? <> · {t.expires}{when(acme().notAfter!)}</> : ''}
                  </p>
                  <p>
                    {t.acmeDomains}
                    <For each={acme().domains}>{(d, i) => <>{i() > 0 ? ', ' : ''}<code>{d}</code></>}</For>
                  </p>
                  <Show when={acme().renewAt}>{(at) => <p>{t.acmeRenewsAt(when(at()))}</p>}</Show>
                  <Show when={acme().lastError}>
                    {(error) => (
                      <p class="notice" data-testid="acme-error">
                        {t.acmeError}
                        {/[.!?]$/.test(error()) ? error() : `${error()}.`} {t.acmeKeeps}
                      </p>
                    )}
                  </Show>
                  <ErrorBox error={acmeRenewal.error()} />
                  <p>
                    <button type="button" onClick={renewAcme} disabled={acmeRenewal.busy()}>
                      {t.acmeRenew}
                    </button>
                  </p>
                </section>
              )}
            </Show>
            <Show when={s.certificate}>
              {(cert) => (
                <section class="card" aria-labelledby="tls-cert">
                  <h2 id="tls-cert">{t.certificate}</h2>
                  <p>
                    {t.expires}
                    {when(cert().notAfter)}
                    {s.renewsAt ? t.renews(when(s.renewsAt)) : ''}
                  </p>
                  <h3>{t.names}</h3>
                  <ul class="chips">
                    <For each={cert().dnsNames}>{(n) => <li><code>{n}</code></li>}</For>
                  </ul>
                  <h3>{t.addresses}</h3>
                  <ul class="chips">
                    <For each={cert().ipAddresses}>{(n) => <li><code>{n}</code></li>}</For>
                  </ul>
                </section>
              )}
            </Show>
          </>
        )}
      </Async>
    </>
  );
}
