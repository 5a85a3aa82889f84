/**
 * Forward auth for one application (spec forward-auth.md; docs/protect-apps-without-oidc.md): the
 * hosts it protects behind a reverse proxy and the proxy configuration for those hosts (Caddy,
 * nginx, Traefik) to copy, as the server prints it. Who passes is the application's: its sign-up
 * policy and its allowed groups, on the Access section, which every protocol honours.
 */
import { createResource, createSignal, For, Show } from 'solid-js';
import { A } from '@solidjs/router';
import { ApiError, client, enc, ok, type Application } from '../../api';
import { CopyButton, ErrorBox, Field, SaveOrTurnOff, toast, useAction } from '../../ui';

const t = {
  intro:
    'Put an app that cannot sign anyone in itself (Home Assistant, the *arr stack, a dashboard) behind Caddy, nginx or Traefik: the proxy asks Gatehouse about every request, sends people who are not signed in to Gatehouse\'s sign-in page and back, and hands the app who they are in Remote-User, Remote-Email, Remote-Name, Remote-Groups and Remote-Role. This application\'s sign-up policy, second-factor policy and consent apply.',
  hosts: 'Protected hosts',
  hostsHint: 'One per line: wiki.lan.example (any port), wiki.lan.example:8443 (that port), *.media.lan.example (one name under it). Each host belongs to one application.',
  whoPasses: 'Who passes: the members this application admits. To let in only some groups, set its ',
  allowedGroups: 'allowed groups',
  whoPassesEnd: ' (they hold for every protocol).',
  restricted: (groups: string) => `Only members of ${groups} pass (the application's allowed groups).`,
  basic: 'Offer HTTP Basic to clients that cannot follow a sign-in (WebDAV, CalDAV)',
  basicHint: 'The check then answers 401 with a Basic challenge beside Bearer; people use app passwords from their account page.',
  save: 'Save protected hosts',
  saved: 'Forward auth saved.',
  off: 'Stop protecting hosts',
  removed: 'This application protects no hosts now.',
  none: 'This application protects no hosts yet: add one above, save, and the proxy configuration appears here.',
  config: 'Proxy configuration',
  configHint: 'Paste it into the proxy\'s configuration. It removes identity headers a client sends, routes /.gatehouse/ on each host to Gatehouse (the sign-in hand-over and sign-out), and checks every other request. Gatehouse believes the proxy only from the addresses in GATEHOUSE_TRUST_PROXY (this machine when unset).',
  proxy: 'Proxy',
  upstream: 'The app itself listens at',
  scheme: 'The hosts are served over',
  traefikNote: 'The Traefik configuration is written from Traefik\'s documentation; the Caddy and nginx ones are tested against the real proxies.',
};

const PROXIES = [
  ['caddy', 'Caddy 2.6+'],
  ['nginx', 'nginx 1.22+'],
  ['traefik', 'Traefik v3'],
] as const;
type ProxyName = (typeof PROXIES)[number][0];

const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

/** The server's field errors under `forwardAuth.hosts` (and the field itself), in words, by list. */
function forwardAuthErrors(error: unknown): { hosts: string[]; other: string[] } {
  const out = { hosts: [] as string[], other: [] as string[] };
  if (!(error instanceof ApiError)) return out;
  for (const e of error.problem.errors ?? []) {
    const match = /^body\.forwardAuth(?:\.(hosts)(?:\.(\d+))?)?$/.exec(e.path);
    if (!match) continue;
    const where = match[2] !== undefined ? `Line ${Number(match[2]) + 1}: ` : '';
    (match[1] ? out.hosts : out.other).push(where + e.message);
  }
  return out;
}

export function ForwardAuthTab(props: { app: Application; onSaved: (app: Application) => void }) {
  const path = { id: props.app.id };
  const current = () => props.app.forwardAuth;
  const [hosts, setHosts] = createSignal((current()?.hosts ?? []).join('\n'));
  const [basic, setBasic] = createSignal(current()?.basic ?? false);
  const [proxy, setProxy] = createSignal<ProxyName>('caddy');
  // Unset until changed here: the server starts from the app preset's upstream and scheme (and says which).
  const [upstream, setUpstream] = createSignal<string | undefined>();
  const [scheme, setScheme] = createSignal<'https' | 'http' | undefined>();
  const save = useAction();
  const errors = () => forwardAuthErrors(save.error());

  const [config] = createResource(
    () => (current() ? { proxy: proxy(), upstream: upstream()?.trim() || undefined, scheme: scheme(), hosts: current()!.hosts.join() } : undefined),
    ({ proxy: p, upstream: u, scheme: s }) =>
      ok(client.GET('/api/admin/applications/{id}/forward-auth/snippet', { params: { path, query: { proxy: p, ...(u ? { upstream: u } : {}), ...(s ? { scheme: s } : {}) } } })),
  );

  const store = async (forwardAuth: { hosts: string[]; basic: boolean } | null, message: string) => {
    const next = await save.run(() => ok(client.PATCH('/api/admin/applications/{id}', { params: { path }, body: { forwardAuth } })));
    if (!next) return;
    props.onSaved(next);
    toast(message);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    await store({ hosts: lines(hosts()), basic: basic() }, t.saved);
  };
  const stop = async () => {
    await store(null, t.removed);
    setHosts('');
    setBasic(false);
  };

  return (
    <>
      <form class="card" novalidate onSubmit={submit} data-testid="forward-auth">
        <p>{t.intro}</p>
        <Field label={t.hosts} hint={t.hostsHint} errors={errors().hosts}>
          {(a) => <textarea {...a} name="forwardAuthHosts" rows={4} value={hosts()} onInput={(e) => setHosts(e.currentTarget.value)} placeholder="wiki.lan.example" />}
        </Field>
        <Show
          when={props.app.allowedGroups}
          fallback={
            <p class="hint" data-testid="forward-auth-who">
              {t.whoPasses}
              <A href={`/applications/${enc(props.app.id)}/access`}>{t.allowedGroups}</A>
              {t.whoPassesEnd}
            </p>
          }
        >
          {(groups) => (
            <p class="hint" data-testid="forward-auth-who">
              {t.restricted(groups().join(', '))} <A href={`/applications/${enc(props.app.id)}/access`}>{t.allowedGroups}</A>
            </p>
          )}
        </Show>
        <label class="check">
          <input type="checkbox" name="forwardAuthBasic" checked={basic()} onChange={(e) => setBasic(e.currentTarget.checked)} />
          {t.basic}
        </label>
        <p class="hint">{t.basicHint}</p>
        <For each={errors().other}>{(message) => <p class="error" role="alert">{message}</p>}</For>
        <ErrorBox error={save.error()} fieldsShown />
        <SaveOrTurnOff save={t.save} off={t.off} on={!!current()} busy={save.busy()} saveDisabled={!lines(hosts()).length} onTurnOff={() => void stop()} />
      </form>

      <h2>{t.config}</h2>
      <Show when={current()} fallback={<p class="hint">{t.none}</p>}>
        <div class="card" data-testid="forward-auth-config">
          <p class="hint">{t.configHint}</p>
          <div class="row">
            <label>
              {t.proxy}{' '}
              <select name="proxy" aria-label={t.proxy} value={proxy()} onChange={(e) => setProxy(e.currentTarget.value as ProxyName)}>
                <For each={PROXIES}>{([value, label]) => <option value={value}>{label}</option>}</For>
              </select>
            </label>
            <label>
              {t.upstream}{' '}
              <input name="upstream" aria-label={t.upstream} value={upstream() ?? config.latest?.upstream ?? ''} onChange={(e) => setUpstream(e.currentTarget.value)} />
            </label>
            <label>
              {t.scheme}{' '}
              <select name="scheme" aria-label={t.scheme} value={scheme() ?? config.latest?.scheme ?? 'https'} onChange={(e) => setScheme(e.currentTarget.value as 'https' | 'http')}>
                <option value="https">https</option>
                <option value="http">http</option>
              </select>
            </label>
          </div>
          <Show when={!config.error} fallback={<ErrorBox error={config.error} />}>
            <Show when={config.latest}>
              {(c) => (
                <>
                  <pre data-testid="proxy-config">{c().snippet}</pre>
                  <CopyButton value={c().snippet} label={t.config} />
                </>
              )}
            </Show>
          </Show>
          <Show when={proxy() === 'traefik'}>
            <p class="hint">{t.traefikNote}</p>
          </Show>
        </div>
      </Show>
    </>
  );
}
