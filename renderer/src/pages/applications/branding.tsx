/**
 * How the application's hosted pages look (issue 25): its accent colour (checked by the server
 * against the buttons' white text, WCAG AA) and its logo (a PNG or SVG of at most 100 KB,
 * uploaded as it is). Whether people are asked to consent is in Access (access.tsx).
 */
import { createSignal, Show } from 'solid-js';
import { client, fieldErrors, ok, type Application } from '../../api';
import { ErrorBox, Field, toast, useAction } from '../../ui';

const t = {
  heading: 'Hosted pages',
  accent: 'Accent colour',
  accentHint: 'Primary buttons on its sign-in, sign-up, consent, device and error pages, written #rrggbb. Empty: the default blue. It must reach a contrast of 4.5:1 with white button text.',
  accentFormat: 'Write the colour as # and six hexadecimal digits, e.g. #1d4ed8.',
  save: 'Save hosted pages',
  saved: 'Hosted pages saved.',
  logo: 'Logo',
  logoHint: 'A PNG or SVG of at most 100 KB, shown at 48 × 48 px. It is served from this server; an SVG only ever as an image.',
  logoTooBig: 'The file is larger than 100 KB.',
  logoType: 'Choose a PNG or an SVG file.',
  uploaded: 'Logo uploaded.',
  removeLogo: 'Remove logo',
  removed: 'Logo removed.',
  current: 'Current logo',
};

const HEX = /^#[0-9a-fA-F]{6}$/;
const LOGO_MAX = 100 * 1024;

export function BrandingCard(props: { app: Application; onSaved: (app: Application) => void }) {
  const id = props.app.id;
  const [accent, setAccent] = createSignal(props.app.branding.accentColor ?? '');
  const [fileProblem, setFileProblem] = createSignal<string[]>([]);
  const save = useAction();
  const logo = useAction();
  const accentErrors = () => [...(accent().trim() && !HEX.test(accent().trim()) ? [t.accentFormat] : []), ...(fieldErrors(save.error()).branding ?? [])];

  const submit = async (e: Event) => {
    e.preventDefault();
    if (accent().trim() && !HEX.test(accent().trim())) return;
    const next = await save.run(() =>
      ok(client.PATCH('/api/admin/applications/{id}', {
        params: { path: { id } },
        body: { branding: { accentColor: accent().trim() || null } },
      })),
    );
    if (next) {
      props.onSaved(next);
      toast(t.saved);
    }
  };

  const upload = async (file: File | undefined) => {
    setFileProblem([]);
    if (!file) return;
    if (file.type !== 'image/png' && file.type !== 'image/svg+xml') return setFileProblem([t.logoType]);
    if (file.size > LOGO_MAX) return setFileProblem([t.logoTooBig]);
    // The body is the file itself (not JSON), sent as it is.
    const next = await logo.run(() =>
      ok(client.PUT('/api/admin/applications/{id}/logo', {
        params: { path: { id } },
        body: file,
        bodySerializer: (body: unknown) => body as Blob,
        headers: { 'content-type': file.type },
      })),
    );
    if (next) {
      props.onSaved(next);
      toast(t.uploaded);
    }
  };

  const removeLogo = async () => {
    const done = await logo.run(async () => (await ok(client.DELETE('/api/admin/applications/{id}/logo', { params: { path: { id } } })), true));
    if (done) {
      props.onSaved({ ...props.app, branding: { ...props.app.branding, logoUrl: null } });
      toast(t.removed);
    }
  };

  return (
    <>
      <h2>{t.heading}</h2>
      <form class="card" novalidate onSubmit={submit} data-testid="branding">
        <Field label={t.accent} hint={t.accentHint} errors={accentErrors()}>
          {(a) => <input {...a} name="accentColor" placeholder="#1d4ed8" value={accent()} onInput={(e) => setAccent(e.currentTarget.value)} />}
        </Field>
        <ErrorBox error={save.error()} fieldsShown />
        <div class="actions">
          <button class="primary" type="submit" disabled={save.busy()}>
            {t.save}
          </button>
        </div>
      </form>
      <div class="card">
        <Show when={props.app.branding.logoUrl}>
          {(url) => <img src={url()} alt={t.current} width="48" height="48" />}
        </Show>
        <Field label={t.logo} hint={t.logoHint} errors={fileProblem()}>
          {(a) => <input {...a} type="file" name="logo" accept="image/png,image/svg+xml" onChange={(e) => void upload(e.currentTarget.files?.[0])} />}
        </Field>
        <ErrorBox error={logo.error()} />
        <Show when={props.app.branding.logoUrl}>
          <button type="button" class="danger" onClick={removeLogo} disabled={logo.busy()}>
            {t.removeLogo}
          </button>
        </Show>
      </div>
    </>
  );
}
