/**
 * App presets in the panel (spec presets-and-operations.md, "App presets"): the wizard's first
 * step, "What are you connecting?" (a searchable list of app names, no logos), the preset's
 * inputs, the set-up page after creation, and on the application's Setup tab the preset it came
 * from with what a newer version offers.
 */
import { createMemo, createResource, createSignal, For, Show } from 'solid-js';
import { ApiError, client, fieldErrors, ok, type Application, type CreatedApplication, type PresetStatus, type PresetSummary, type Setup } from '../../api';
import { Async, CopyButton, CopyField, ErrorBox, Field, TableScroll, useAction } from '../../ui';
import { PLACEHOLDERS } from '../../../../server/presets/build';

const t = {
  question: 'What are you connecting?',
  search: 'Search apps',
  searchPlaceholder: 'Nextcloud, Grafana, Jellyfin…',
  noMatch: (q: string) => `No preset matches "${q}". Use "Something else" to set it up by hand.`,
  somethingElse: 'Something else',
  somethingElseText: 'Any other app or library that speaks OpenID Connect: type its redirect URIs yourself.',
  categories: {
    'web-app': 'Apps',
    library: 'Frameworks and libraries',
    'forward-auth': 'Behind a reverse proxy (forward auth)',
    ldap: 'Over LDAP',
    mail: 'Mail',
    network: 'Network gear (RADIUS)',
    saml: 'Over SAML 2.0',
  } as Record<string, string>,
  protocol: { oidc: 'OpenID Connect', 'forward-auth': 'forward auth', ldap: 'LDAP', radius: 'RADIUS', saml: 'SAML 2.0' } as Record<string, string>,
  tested: 'tested here',
  documented: (product: string, version: string) => `checked against the documentation of ${product} ${version}`,
  configured: (product: string, version: string) => `settings checked here (${product} ${version} from its documentation)`,
  statusTested: (product: string, version: string) => `Tested here: Gatehouse's own tests run ${product} ${version} against this preset.`,
  statusDocumented: (product: string, version: string) => `Checked against the documentation of ${product} ${version}; it does not run here.`,
  statusConfigured: (product: string, version: string) =>
    `Checked against the documentation of ${product} ${version}; it does not run here, but Gatehouse's tests create an application from this preset and check its settings and Test sign-in checks.`,
  inputsFor: (name: string) => `Connect ${name}`,
  optional: ' (optional)',
  example: (e: string) => `e.g. ${e}`,
  name: 'Name in Gatehouse',
  nameHint: 'What people see on the sign-in page, their account page and in e-mails.',
  clientId: 'Client ID',
  clientIdHint: 'Lower-case letters, digits, - and _; it cannot change later. Default: the preset\'s id.',
  back: 'Back',
  create: 'Create application',
  creating: 'Creating…',
  required: 'This is required.',
  setupTitle: 'Set up the app',
  trustTitle: "Trust Gatehouse's certificate authority",
  trustIntro: (runtime: string) => `The app's server (${runtime}) must trust the local CA to reach Gatehouse over HTTPS. On that server:`,
  caPath: 'Where the app\'s server keeps the CA',
  caPathHint: 'An absolute path; the lines below follow it.',
  trustEnv: 'Start the app with',
  trustSettings: 'Settings',
  trustCommands: 'Commands (download the CA, check its fingerprint, then the runtime\'s own step)',
  fingerprint: 'SHA-256 fingerprint to check',
  settings: 'Settings to type into the app',
  files: 'Files',
  notes: 'Notes',
  copyFile: (name: string) => `file ${name}`,
  secretTitle: 'Shown only now.',
  secretText: ' It is written into the set-up text below; copy it into the app now: Gatehouse keeps only a hash.',
  clientSecret: 'Client secret',
  ldapPassword: 'LDAP service account password',
  fromPreset: (name: string, version: number) => `Made from the ${name} preset, version ${version}.`,
  upToDate: 'It has every setting the current version of the preset gives.',
  updated: (latest: number) => `Preset updated (version ${latest}): these settings differ.`,
  differences: 'Settings the preset now sets differently',
  field: 'Setting',
  now: 'Now',
  offered: 'The preset now sets',
  changedHere: 'changed here — kept unless you take it',
  take: 'Take the unchanged ones',
  takeThis: 'Take this one',
  taking: 'Taking…',
};

const show = (value: unknown) => (value === null || value === undefined ? '—' : Array.isArray(value) ? value.join(', ') || '(none)' : typeof value === 'object' ? JSON.stringify(value) : String(value));

export const presetStatusText = (p: PresetSummary) =>
  p.testedWith.status === 'tested'
    ? t.tested
    : p.testedWith.status === 'configuration'
      ? t.configured(p.testedWith.product, p.testedWith.version)
      : t.documented(p.testedWith.product, p.testedWith.version);

/** Step 0 of the wizard: pick an app by name, or "Something else" for the hand-made path. */
export function PresetPicker(props: { presets: PresetSummary[]; onPick: (preset: PresetSummary) => void; onSomethingElse: () => void }) {
  const [query, setQuery] = createSignal('');
  const matches = createMemo(() => {
    const q = query().trim().toLowerCase();
    return props.presets.filter((p) => !q || p.name.toLowerCase().includes(q) || p.id.includes(q) || p.summary.toLowerCase().includes(q));
  });
  const categories = () => [...new Set(matches().map((p) => p.category))];
  return (
    <div class="card preset-picker">
      <h2>{t.question}</h2>
      <Field label={t.search}>
        {(a) => <input {...a} type="search" name="preset-search" value={query()} onInput={(e) => setQuery(e.currentTarget.value)} placeholder={t.searchPlaceholder} autofocus />}
      </Field>
      <div class="actions">
        <button type="button" onClick={props.onSomethingElse} data-testid="something-else">
          {t.somethingElse}
        </button>
        <span class="hint">{t.somethingElseText}</span>
      </div>
      <Show when={matches().length} fallback={<p class="muted">{t.noMatch(query())}</p>}>
        <For each={categories()}>
          {(category) => (
            <section>
              <h3>{t.categories[category] ?? category}</h3>
              <ul class="preset-list" role="list">
                <For each={matches().filter((p) => p.category === category)}>
                  {(preset) => (
                    <li>
                      <button type="button" class="preset" data-preset={preset.id} onClick={() => props.onPick(preset)}>
                        <strong>{preset.name}</strong>
                        <span class={`badge ${preset.testedWith.status === 'tested' ? 'ok' : ''}`}>{presetStatusText(preset)}</span>
                        <span class="hint">{preset.summary}</span>
                      </button>
                    </li>
                  )}
                </For>
              </ul>
            </section>
          )}
        </For>
      </Show>
    </div>
  );
}

/** The chosen preset's inputs (and an optional name and id); creates the application. */
export function PresetInputsForm(props: { preset: PresetSummary; onBack: () => void; onCreated: (app: CreatedApplication) => void }) {
  const [values, setValues] = createSignal<Record<string, string>>({});
  const [name, setName] = createSignal('');
  const [id, setId] = createSignal('');
  const [submitted, setSubmitted] = createSignal(false);
  const action = useAction();
  const server = () => fieldErrors(action.error());
  /** The server's words about one input (`body.presetInputs.<key>`). */
  const inputErrors = (key: string) => {
    const e = action.error();
    if (!(e instanceof ApiError)) return [];
    return (e.problem.errors ?? []).filter((f) => f.path === `body.presetInputs.${key}`).map((f) => f.message.replace(/^./, (c) => c.toUpperCase()));
  };
  const errorsOf = (key: string, required: boolean) => [
    ...(submitted() && required && !(values()[key] ?? '').trim() ? [t.required] : []),
    ...inputErrors(key),
  ];
  const submit = async (e: Event) => {
    e.preventDefault();
    setSubmitted(true);
    if (props.preset.inputs.some((i) => i.required && !(values()[i.key] ?? '').trim())) return;
    const presetInputs = Object.fromEntries(Object.entries(values()).filter(([, v]) => v.trim()).map(([k, v]) => [k, v.trim()]));
    const created = await action.run(() =>
      ok(client.POST('/api/admin/applications', {
        body: { preset: props.preset.id, presetInputs, ...(id().trim() ? { id: id().trim() } : {}), ...(name().trim() ? { name: name().trim() } : {}) },
      })),
    );
    if (created) props.onCreated(created);
  };
  return (
    <form class="card" novalidate onSubmit={submit}>
      <h2>{t.inputsFor(props.preset.name)}</h2>
      <p class="hint">
        {props.preset.testedWith.status === 'tested'
          ? t.statusTested(props.preset.testedWith.product, props.preset.testedWith.version)
          : props.preset.testedWith.status === 'configuration'
            ? t.statusConfigured(props.preset.testedWith.product, props.preset.testedWith.version)
            : t.statusDocumented(props.preset.testedWith.product, props.preset.testedWith.version)}
      </p>
      <For each={props.preset.inputs}>
        {(input, i) => (
          <Field
            label={`${input.label}${input.required ? '' : t.optional}`}
            hint={[input.hint, t.example(input.example)].filter(Boolean).join(' ')}
            errors={errorsOf(input.key, input.required)}
          >
            {(a) => (
              <input
                {...a}
                name={input.key}
                value={values()[input.key] ?? ''}
                placeholder={input.default ?? input.example}
                onInput={(e) => setValues((v) => ({ ...v, [input.key]: e.currentTarget.value }))}
                autofocus={i() === 0}
              />
            )}
          </Field>
        )}
      </For>
      <Field label={`${t.name}${t.optional}`} hint={t.nameHint} errors={server().name ?? []}>
        {(a) => <input {...a} name="name" value={name()} placeholder={props.preset.appName} onInput={(e) => setName(e.currentTarget.value)} maxLength={200} />}
      </Field>
      <Field label={`${t.clientId}${t.optional}`} hint={t.clientIdHint} errors={server().id ?? []}>
        {(a) => <input {...a} name="id" value={id()} placeholder={props.preset.id} onInput={(e) => setId(e.currentTarget.value)} />}
      </Field>
      <ErrorBox error={action.error()} fieldsShown />
      <div class="actions">
        <button type="button" onClick={props.onBack}>
          {t.back}
        </button>
        <button class="primary" type="submit" disabled={action.busy()}>
          {action.busy() ? t.creating : t.create}
        </button>
      </div>
    </form>
  );
}

/** Secrets shown once (at creation, or when a new one is made), to fill into the set-up text. */
export interface ShownSecrets {
  clientSecret?: string | null | undefined;
  ldapPassword?: string | null | undefined;
}

/** Each shown secret with its label and the placeholder the set-up text has in its place. */
const SECRET_PLACES = [
  { key: 'clientSecret', label: t.clientSecret, placeholder: PLACEHOLDERS.clientSecret },
  { key: 'ldapPassword', label: t.ldapPassword, placeholder: PLACEHOLDERS.ldapPassword },
] as const;

/**
 * The set-up text with the secrets shown now written in place of their placeholders, and which of
 * them it uses: a secret the app never reads (a forward-auth app's client secret) is not shown.
 */
export function withSecrets(setup: Setup, secrets: ShownSecrets = {}): { setup: Setup; used: { label: string; value: string }[] } {
  const known = SECRET_PLACES.flatMap((place) => (secrets[place.key] ? [{ ...place, value: secrets[place.key]! }] : []));
  const text = [...setup.settings.map((s) => s.value), ...setup.files.map((f) => f.content)].join('\n');
  const used = known.filter((k) => text.includes(k.placeholder));
  const fill = (value: string) => used.reduce((out, k) => out.replaceAll(k.placeholder, k.value), value);
  return {
    used: used.map(({ label, value }) => ({ label, value })),
    setup: {
      ...setup,
      settings: setup.settings.map((s) => ({ ...s, value: fill(s.value) })),
      files: setup.files.map((f) => ({ ...f, content: fill(f.content) })),
      // The note that says to replace a placeholder is done with once it is replaced.
      notes: setup.notes.filter((note) => !used.some((k) => note.includes(k.placeholder))),
    },
  };
}

/**
 * An application's set-up text: the settings with copy buttons, the files, the notes, and the
 * trust lines when LAN TLS is on. `secrets` shown now (at creation, or made anew) are written
 * into it, and shown above it once, when the app uses them.
 */
export function SetupView(props: { appId: string; secrets?: ShownSecrets | undefined }) {
  const [caPath, setCaPath] = createSignal<string | undefined>();
  const [setup] = createResource(
    () => ({ id: props.appId, caPath: caPath() }),
    ({ id, caPath }) => ok(client.GET('/api/admin/applications/{id}/setup', { params: { path: { id }, query: caPath ? { caPath } : {} } })),
  );
  const pathErrors = () => fieldErrors(setup.error)['query.caPath'];
  return (
    <>
    <Show when={pathErrors()}>
      <TrustPathField value={caPath() ?? ''} errors={pathErrors()} onChange={setCaPath} />
    </Show>
    <Show when={!pathErrors()}>
    <Async resource={setup}>
      {(raw: Setup) => {
        const filled = () => withSecrets(raw, props.secrets);
        const s = () => filled().setup;
        return (
          <>
            <Show when={filled().used.length}>
              <div class="notice" role="alert" data-testid="shown-once">
                <strong>{t.secretTitle}</strong>
                {t.secretText}
                <For each={filled().used}>{(secret) => <CopyField label={secret.label} value={secret.value} secret />}</For>
              </div>
            </Show>
            <div class="card setup" data-testid="setup">
              <h2>{t.setupTitle}</h2>
              <h3>{t.settings}</h3>
              <For each={s().settings}>{(setting) => <CopyField label={setting.label} value={setting.value} />}</For>
              <Show when={s().files.length}>
                <h3>{t.files}</h3>
                <For each={s().files}>
                  {(file) => (
                    <figure class="file">
                      <figcaption>
                        <code>{file.name}</code> <CopyButton value={file.content} label={t.copyFile(file.name)} />
                      </figcaption>
                      {/* Focusable: a long line scrolls the box, which keyboards must reach too. */}
                      <pre tabindex="0" aria-label={file.name}>
                        {file.content}
                      </pre>
                    </figure>
                  )}
                </For>
              </Show>
              <Show when={s().notes.length}>
                <h3>{t.notes}</h3>
                <ul>
                  <For each={s().notes}>{(note) => <li>{note}</li>}</For>
                </ul>
              </Show>
              <Show when={s().trust}>
                {(trust) => (
                  <section data-testid="setup-trust" aria-labelledby="setup-trust">
                    <h3 id="setup-trust">{t.trustTitle}</h3>
                    <p>{t.trustIntro(trust().runtime)}</p>
                    <TrustPathField value={trust().caPath} onChange={setCaPath} />
                    <CopyField label={t.fingerprint} value={trust().fingerprintSha256} />
                    <Show when={Object.keys(trust().env).length}>
                      <CopyField label={t.trustEnv} value={Object.entries(trust().env).map(([k, v]) => `${k}=${v}`).join(' ')} />
                    </Show>
                    <For each={trust().settings}>{(setting) => <CopyField label={`${t.trustSettings}: ${setting.file}`} value={`${setting.name} = ${setting.value}`} />}</For>
                    <figure class="file">
                      <figcaption>
                        {t.trustCommands} <CopyButton value={trust().commands.join('\n')} label={t.copyFile('commands')} />
                      </figcaption>
                      <pre tabindex="0" aria-label={t.trustCommands}>
                        {trust().commands.join('\n')}
                      </pre>
                    </figure>
                  </section>
                )}
              </Show>
            </div>
          </>
        );
      }}
    </Async>
    </Show>
    </>
  );
}

/** The CA path of the set-up text's trust lines; the server checks it (400 naming query.caPath). */
function TrustPathField(props: { value: string; errors?: string[]; onChange: (path: string) => void }) {
  return (
    <Field label={t.caPath} hint={t.caPathHint} errors={props.errors}>
      {(a) => <input {...a} type="text" value={props.value} spellcheck={false} onChange={(e) => props.onChange(e.currentTarget.value.trim())} />}
    </Field>
  );
}

/** The preset an application came from, and what a newer version offers (taken only on request). */
export function PresetStatusCard(props: { app: Application; onSaved: (app: Application) => void }) {
  const [status, { mutate }] = createResource(
    () => props.app.preset?.id && props.app.id,
    (id) => ok(client.GET('/api/admin/applications/{id}/preset', { params: { path: { id } } })),
  );
  const action = useAction();
  const take = async (fields?: string[]) => {
    const answer = await action.run(() =>
      ok(client.POST('/api/admin/applications/{id}/preset/upgrade', { params: { path: { id: props.app.id } }, body: fields ? { fields } : {} })),
    );
    if (!answer) return;
    mutate(answer.preset);
    props.onSaved(await ok(client.GET('/api/admin/applications/{id}', { params: { path: { id: props.app.id } } })));
  };
  return (
    <Show when={props.app.preset}>
      <Async resource={status}>
        {(s: PresetStatus) => (
          <div class="card" data-testid="preset-status">
            <p>{t.fromPreset(s.name, s.version)}</p>
            <Show when={s.differences.length} fallback={<p class="muted">{t.upToDate}</p>}>
              <div class="notice">
                <strong>{t.updated(s.latestVersion)}</strong>
                <TableScroll label={t.differences}>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">{t.field}</th>
                      <th scope="col">{t.now}</th>
                      <th scope="col">{t.offered}</th>
                      <th scope="col" />
                    </tr>
                  </thead>
                  <tbody>
                    <For each={s.differences}>
                      {(d) => (
                        <tr>
                          <td>
                            <code>{d.field}</code>
                          </td>
                          <td>
                            {show(d.current)}
                            <Show when={d.changedHere}>
                              {' '}
                              <span class="badge warn">{t.changedHere}</span>
                            </Show>
                          </td>
                          <td>{show(d.offered)}</td>
                          <td>
                            <Show when={d.changedHere}>
                              <button type="button" class="small" onClick={() => take([d.field])} disabled={action.busy()}>
                                {t.takeThis}
                              </button>
                            </Show>
                          </td>
                        </tr>
                      )}
                    </For>
                  </tbody>
                </table>
                </TableScroll>
                <Show when={s.differences.some((d) => !d.changedHere)}>
                  <button type="button" class="primary" onClick={() => take()} disabled={action.busy()}>
                    {action.busy() ? t.taking : t.take}
                  </button>
                </Show>
              </div>
            </Show>
            <ErrorBox error={action.error()} />
          </div>
        )}
      </Async>
    </Show>
  );
}
