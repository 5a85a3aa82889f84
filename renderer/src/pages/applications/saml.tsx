/**
 * SAML for one application (spec saml.md, "Per application"; docs/saml.md): the service
 * provider's metadata imported from a file, pasted, or from its URL (fetched once by the server with
 * the webhook rules for addresses; POST …/saml/metadata fills the entity ID, the
 * ACS and SLO endpoints and the SP's certificates), the settings as the `saml` field has them
 * (entity ID, ACS URLs, single logout, NameID, attributes, what is signed) saved with each problem
 * under its field, and what the SP is given: Gatehouse's metadata URL, entity ID and signing
 * certificate (GET /saml/keys), to copy, and the signing certificate's rotation (POST
 * /saml/keys/rotate, after a confirmation): the next certificate is shown as soon as it is
 * published, before it signs.
 */
import { createResource, createSignal, For, Show } from 'solid-js';
import { ApiError, client, ok, type Application } from '../../api';
import { Async, confirmAction, CopyField, ErrorBox, Field, SaveOrTurnOff, toast, useAction, when } from '../../ui';

type Saml = NonNullable<Application['saml']>;
type Attribute = NonNullable<Saml['attributes']>[number];
type NameIdFormat = Saml['nameId']['format'];

const t = {
  intro:
    'Sign people in to apps that speak SAML 2.0 (Nextcloud, Zammad, BookStack, AWS IAM Identity Center…). Import the app\'s service provider metadata, check the settings, then give the app Gatehouse\'s metadata URL below.',
  import: 'Import the service provider\'s metadata',
  file: 'Metadata file',
  fileHint: 'The XML file the app offers (often at /saml/metadata or similar).',
  paste: 'Or paste the metadata XML',
  url: 'Or give the metadata URL',
  urlHint: 'Gatehouse fetches it once, now (loopback and link-local addresses are refused, as for webhooks).',
  importAction: 'Import metadata',
  imported: 'Metadata imported: the entity ID, endpoints and certificates are filled in.',
  settings: 'Service provider settings',
  entityId: 'Entity ID',
  entityIdHint: 'The SP\'s entityID, exactly as its metadata says (a URI).',
  acs: 'Assertion consumer service URLs',
  acsHint: 'One per line, HTTP-POST; the first is where IdP-initiated sign-ons go.',
  slo: 'Single logout URL',
  sloHint: 'Empty: the app has no single logout.',
  sloBinding: 'Single logout binding',
  nameId: 'NameID format',
  nameIdSource: 'Unspecified NameID comes from',
  attributes: 'Attributes',
  attributesHint:
    'One per line: a name, "=", a source: email, username, name, givenName, familyName, emailVerified, groups, role, profile:KEY, in-group:GROUP or constant:TEXT; or a whole attribute as JSON ({"name":…,"source":{…}}). Empty: email, username, name, givenName, familyName and groups.',
  signResponse: 'Sign the Response',
  signAssertion: 'Sign the Assertion',
  wantSigned: 'Require signed authentication requests (needs the SP\'s certificate)',
  idpInitiated: 'Allow IdP-initiated sign-on (from the people\'s app list)',
  certificates: (n: number) => (n === 0 ? 'No SP certificate: import metadata that carries one to check signed requests.' : `SP certificates: ${n} (from its metadata).`),
  save: 'Save SAML settings',
  saved: 'SAML settings saved.',
  off: 'Remove SAML',
  removed: 'This application is no longer a SAML service provider.',
  ours: 'What the app is given',
  oursHint: 'Most apps read everything from the metadata URL; the others take the entity ID, the sign-on URL and the certificate.',
  metadataUrl: 'Metadata URL',
  idpEntityId: 'Identity provider entity ID',
  ssoUrl: 'Single sign-on URL',
  sloUrl: 'Single logout URL (Gatehouse)',
  certificate: 'Signing certificate',
  fingerprint: 'SHA-256 fingerprint',
  nextKey: 'Next signing certificate',
  nextFingerprint: 'Next SHA-256 fingerprint',
  nextWhen: (at: string) => `Published in the metadata now; it signs from ${at}. Apps given the certificate by hand need this one before then.`,
  rotate: 'Rotate the signing certificate',
  rotateTitle: 'Rotate the SAML signing certificate?',
  rotateText:
    'A new certificate is published in Gatehouse\'s metadata now and signs only after a waiting time (a week unless GATEHOUSE_SAML_KEY_ACTIVATION_HOURS says otherwise), so apps that re-read the metadata trust it first. The current one signs until then. Apps that were given the certificate by hand need the new one before it signs.',
  rotateAction: 'Rotate',
  rotated: (at: string) => `New SAML signing certificate published: it signs from ${at}.`,
};

const FORMATS: [NameIdFormat, string][] = [
  ['persistent', 'Persistent (an opaque value per person and app; default)'],
  ['emailAddress', 'E-mail address'],
  ['unspecified', 'Unspecified (the username or the e-mail)'],
  ['transient', 'Transient (a new value each sign-in)'],
];
const PERSON_FIELDS = ['email', 'username', 'name', 'givenName', 'familyName', 'emailVerified'] as const;
const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

/** An attribute as one line of the box: `name = keyword` when it has no more than a name and a simple source, else its JSON. */
function attributeLine(a: Attribute): string {
  const s = a.source;
  const simple = a.nameFormat === undefined && a.friendlyName === undefined;
  const keys = Object.keys(s).filter((k) => k !== 'type');
  if (simple && s.type === 'personField' && keys.join() === 'field') return `${a.name} = ${s.field}`;
  if (simple && (s.type === 'groups' || s.type === 'role') && !keys.length) return `${a.name} = ${s.type}`;
  if (simple && s.type === 'profileField' && keys.join() === 'key') return `${a.name} = profile:${s.key}`;
  if (simple && s.type === 'inGroup' && keys.join() === 'group') return `${a.name} = in-group:${s.group}`;
  if (simple && s.type === 'constant' && keys.join() === 'value' && typeof s.value === 'string') return `${a.name} = constant:${s.value}`;
  return JSON.stringify(a);
}

/** A line of the box as an attribute (the server checks the rest and names the line). */
function attributeOf(line: string): unknown {
  if (line.startsWith('{')) {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      return { name: line, source: { type: 'constant' }, nameFormat: 'not JSON' };
    }
  }
  const at = line.indexOf('=');
  const name = (at < 0 ? line : line.slice(0, at)).trim();
  const source = at < 0 ? '' : line.slice(at + 1).trim();
  const [kind, ...rest] = source.split(':');
  const value = rest.join(':');
  if ((PERSON_FIELDS as readonly string[]).includes(source)) return { name, source: { type: 'personField', field: source } };
  if (source === 'groups' || source === 'role') return { name, source: { type: source } };
  if (kind === 'profile') return { name, source: { type: 'profileField', key: value } };
  if (kind === 'in-group') return { name, source: { type: 'inGroup', group: value } };
  if (kind === 'constant') return { name, source: { type: 'constant', value } };
  return { name, source: { type: source } };
}

/** The server's field errors under `body.saml.<field>` (and the import's `body.xml`), by field, with the line when it names one. */
function samlErrors(error: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (!(error instanceof ApiError)) return out;
  for (const e of error.problem.errors ?? []) {
    const match = /^body\.(?:saml(?:\.(\w+)(?:\.(\d+))?(?:\.([\w.]+))?)?|(xml|url))$/.exec(e.path) ?? /^body\.saml\.(\w+)/.exec(e.path);
    if (!match) continue;
    const field = match[4] ?? match[1] ?? 'other';
    const where = match[2] !== undefined ? `Line ${Number(match[2]) + 1}${match[3] ? ` (${match[3]})` : ''}: ` : match[3] ? `${match[3]}: ` : '';
    (out[field] ??= []).push(where + e.message);
  }
  return out;
}

/** The ACS list from the box: an URL keeps the index it had; a new one gets the next free index. */
function acsOf(text: string, current: Saml['acs']): { url: string; index: number }[] {
  let next = Math.max(-1, ...current.map((a) => a.index)) + 1;
  const taken = new Set<number>();
  return lines(text).map((url) => {
    const had = current.find((a) => a.url === url && !taken.has(a.index));
    const index = had ? had.index : next++;
    taken.add(index);
    return { url, index };
  });
}

function SamlSettingsForm(props: { app: Application; onSaved: (app?: Application) => void }) {
  const id = props.app.id;
  const current = () => props.app.saml;
  const [entityId, setEntityId] = createSignal(current()?.entityId ?? '');
  const [acs, setAcs] = createSignal((current()?.acs ?? []).map((a) => a.url).join('\n'));
  const [slo, setSlo] = createSignal(current()?.slo?.url ?? '');
  const [sloBinding, setSloBinding] = createSignal<'HTTP-Redirect' | 'HTTP-POST'>(current()?.slo?.binding ?? 'HTTP-Redirect');
  const [format, setFormat] = createSignal<NameIdFormat>(current()?.nameId.format ?? 'persistent');
  const [source, setSource] = createSignal<'username' | 'email'>(current()?.nameId.source === 'email' ? 'email' : 'username');
  const [attributes, setAttributes] = createSignal((current()?.attributes ?? []).map(attributeLine).join('\n'));
  const [signResponse, setSignResponse] = createSignal(current()?.signResponse ?? true);
  const [signAssertion, setSignAssertion] = createSignal(current()?.signAssertion ?? true);
  const [wantSigned, setWantSigned] = createSignal(current()?.wantAuthnRequestsSigned ?? false);
  const [idpInitiated, setIdpInitiated] = createSignal(current()?.idpInitiated ?? false);
  const save = useAction();
  const errors = () => samlErrors(save.error());
  const other = () => [...(errors().other ?? []), ...(errors().signResponse ?? []), ...(errors().signAssertion ?? []), ...(errors().spCertificates ?? [])];

  const patch = async (saml: unknown, message: string) => {
    const next = await save.run(() => ok(client.PATCH('/api/admin/applications/{id}', { params: { path: { id } }, body: { saml } as never })));
    if (!next) return;
    props.onSaved(next);
    toast(message);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    const attrs = lines(attributes());
    void patch(
      {
        entityId: entityId().trim(),
        acs: acsOf(acs(), current()?.acs ?? []).map((a) => ({ url: a.url, binding: 'HTTP-POST', index: a.index })),
        slo: slo().trim() ? { url: slo().trim(), binding: sloBinding() } : null,
        nameId: format() === 'unspecified' ? { format: format(), source: source() } : { format: format() },
        attributes: attrs.length ? attrs.map(attributeOf) : null,
        signResponse: signResponse(),
        signAssertion: signAssertion(),
        wantAuthnRequestsSigned: wantSigned(),
        spCertificates: current()?.spCertificates ?? [],
        idpInitiated: idpInitiated(),
      },
      t.saved,
    );
  };
  const check = (label: string, name: string, value: () => boolean, set: (v: boolean) => void) => (
    <label class="check">
      <input type="checkbox" name={name} checked={value()} onChange={(e) => set(e.currentTarget.checked)} /> {label}
    </label>
  );

  return (
    <form class="card" novalidate onSubmit={submit} data-testid="saml-settings" aria-label={t.settings}>
      <h2>{t.settings}</h2>
      <Field label={t.entityId} hint={t.entityIdHint} errors={errors().entityId}>
        {(a) => <input {...a} name="samlEntityId" value={entityId()} onInput={(e) => setEntityId(e.currentTarget.value)} />}
      </Field>
      <Field label={t.acs} hint={t.acsHint} errors={errors().acs}>
        {(a) => <textarea {...a} name="samlAcs" rows={3} value={acs()} onInput={(e) => setAcs(e.currentTarget.value)} />}
      </Field>
      <Field label={t.slo} hint={t.sloHint} errors={errors().slo}>
        {(a) => <input {...a} name="samlSlo" value={slo()} onInput={(e) => setSlo(e.currentTarget.value)} />}
      </Field>
      <Field label={t.sloBinding}>
        {(a) => (
          <select {...a} name="samlSloBinding" value={sloBinding()} onChange={(e) => setSloBinding(e.currentTarget.value as 'HTTP-Redirect' | 'HTTP-POST')}>
            <option value="HTTP-Redirect">HTTP-Redirect</option>
            <option value="HTTP-POST">HTTP-POST</option>
          </select>
        )}
      </Field>
      <Field label={t.nameId} errors={errors().nameId}>
        {(a) => (
          <select {...a} name="samlNameIdFormat" value={format()} onChange={(e) => setFormat(e.currentTarget.value as NameIdFormat)}>
            <For each={FORMATS}>{([value, label]) => <option value={value}>{label}</option>}</For>
          </select>
        )}
      </Field>
      <Show when={format() === 'unspecified'}>
        <Field label={t.nameIdSource}>
          {(a) => (
            <select {...a} name="samlNameIdSource" value={source()} onChange={(e) => setSource(e.currentTarget.value as 'username' | 'email')}>
              <option value="username">Username</option>
              <option value="email">E-mail address</option>
            </select>
          )}
        </Field>
      </Show>
      <Field label={t.attributes} hint={t.attributesHint} errors={errors().attributes}>
        {(a) => <textarea {...a} name="samlAttributes" rows={5} value={attributes()} onInput={(e) => setAttributes(e.currentTarget.value)} />}
      </Field>
      <fieldset>
        <legend>Signing and sign-on</legend>
        {check(t.signResponse, 'samlSignResponse', signResponse, setSignResponse)}
        {check(t.signAssertion, 'samlSignAssertion', signAssertion, setSignAssertion)}
        {check(t.wantSigned, 'samlWantSigned', wantSigned, setWantSigned)}
        {check(t.idpInitiated, 'samlIdpInitiated', idpInitiated, setIdpInitiated)}
        <div class="field-errors" aria-live="polite">
          <For each={[...(errors().wantAuthnRequestsSigned ?? []), ...(errors().idpInitiated ?? [])]}>{(m) => <p>{m}</p>}</For>
        </div>
      </fieldset>
      <p class="hint">{t.certificates(current()?.spCertificates.length ?? 0)}</p>
      <Show when={other().length}>
        <div class="field-errors" aria-live="polite">
          <For each={other()}>{(m) => <p>{m}</p>}</For>
        </div>
      </Show>
      <ErrorBox error={save.error()} fieldsShown />
      <SaveOrTurnOff save={t.save} off={t.off} on={!!current()} busy={save.busy()} onTurnOff={() => void patch(null, t.removed)} />
    </form>
  );
}

function MetadataImport(props: { app: Application; onSaved: (app?: Application) => void }) {
  const [xml, setXml] = createSignal('');
  const [url, setUrl] = createSignal('');
  const importing = useAction();
  const errors = () => samlErrors(importing.error());
  let fileInput: HTMLInputElement | undefined;
  const readFile = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (file) setXml(await file.text());
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const next = await importing.run(() =>
      ok(client.POST('/api/admin/applications/{id}/saml/metadata', { params: { path: { id: props.app.id } }, body: xml().trim() ? { xml: xml() } : { url: url().trim() } })),
    );
    if (!next) return;
    setXml('');
    setUrl('');
    if (fileInput) fileInput.value = '';
    props.onSaved(next);
    toast(t.imported);
  };
  return (
    <form class="card" novalidate onSubmit={submit} data-testid="saml-import" aria-label={t.import}>
      <h2>{t.import}</h2>
      <Field label={t.file} hint={t.fileHint}>
        {(a) => <input {...a} ref={fileInput} type="file" name="samlMetadataFile" accept=".xml,application/xml,application/samlmetadata+xml,text/xml" onChange={(e) => void readFile(e.currentTarget)} />}
      </Field>
      <Field label={t.paste} errors={errors().xml}>
        {(a) => <textarea {...a} name="samlMetadata" rows={6} spellcheck={false} value={xml()} onInput={(e) => setXml(e.currentTarget.value)} />}
      </Field>
      <Field label={t.url} hint={t.urlHint} errors={errors().url}>
        {(a) => <input {...a} type="url" name="samlMetadataUrl" value={url()} onInput={(e) => setUrl(e.currentTarget.value)} />}
      </Field>
      <ErrorBox error={importing.error()} fieldsShown />
      <div class="actions">
        <button class="primary" type="submit" disabled={importing.busy() || (!xml().trim() && !url().trim())}>
          {t.importAction}
        </button>
      </div>
    </form>
  );
}

function IdentityProvider() {
  const [keys, { refetch }] = createResource(() => ok(client.GET('/api/admin/saml/keys')));
  const rotation = useAction();
  const rotate = async () => {
    if (!(await confirmAction(t.rotateTitle, t.rotateText, t.rotateAction))) return;
    const rotated = await rotation.run(() => ok(client.POST('/api/admin/saml/keys/rotate')));
    if (!rotated) return;
    toast(t.rotated(when(rotated.key.activatesAt)));
    void refetch();
  };
  return (
    <section class="card" data-testid="saml-idp" aria-label={t.ours}>
      <h2>{t.ours}</h2>
      <p class="hint">{t.oursHint}</p>
      <Async resource={keys}>
        {(k) => {
          const active = k.keys.find((key) => key.status === 'active');
          const next = k.keys.find((key) => key.status === 'next');
          return (
            <>
              <CopyField label={t.metadataUrl} value={k.metadataUrl} />
              <CopyField label={t.idpEntityId} value={k.entityId} />
              <CopyField label={t.ssoUrl} value={k.ssoUrl} />
              <CopyField label={t.sloUrl} value={k.sloUrl} />
              <Show when={active}>
                <CopyField label={t.certificate} value={active!.certificate} />
                <CopyField label={t.fingerprint} value={active!.fingerprint} />
              </Show>
              <Show
                when={next}
                fallback={
                  <div class="actions">
                    <button type="button" disabled={rotation.busy()} onClick={() => void rotate()}>
                      {t.rotate}
                    </button>
                  </div>
                }
              >
                <p class="hint" data-testid="saml-next-key">{t.nextWhen(when(next!.activatesAt))}</p>
                <CopyField label={t.nextKey} value={next!.certificate} />
                <CopyField label={t.nextFingerprint} value={next!.fingerprint} />
              </Show>
              <ErrorBox error={rotation.error()} />
            </>
          );
        }}
      </Async>
    </section>
  );
}

export function SamlTab(props: { app: Application; onSaved: (app?: Application) => void }) {
  return (
    <>
      <p class="hint">{t.intro}</p>
      <MetadataImport app={props.app} onSaved={props.onSaved} />
      {/* Keyed by the record: an import or a save shows the settings as the server has them. */}
      <For each={[props.app.saml]}>{() => <SamlSettingsForm app={props.app} onSaved={props.onSaved} />}</For>
      <IdentityProvider />
    </>
  );
}
