/**
 * Advanced › Name and pages: the application's name, how its hosted pages look (branding.tsx), and
 * deleting it — shown only to those who may (owners: admin-policy.ts), not to its app managers.
 */
import { createSignal, Show } from 'solid-js';
import { useNavigate } from '@solidjs/router';
import { client, fieldErrors, ok } from '../../api';
import { may } from '../../me';
import { confirmAction, ErrorBox, Field, toast, useAction } from '../../ui';
import { requiredText } from '../../validate';
import { BrandingCard } from './branding';
import type { SectionProps } from './sections';

const t = {
  name: 'Name',
  nameHint: 'What people see on the sign-in pages, their account page and in e-mails.',
  theName: 'The name',
  save: 'Save name',
  saved: 'Name saved.',
  danger: 'Delete this application',
  removeText: 'Its members, invitations, API keys and webhook history are deleted too. This cannot be undone.',
  remove: 'Delete application',
  removeTitle: (name: string) => `Delete ${name}?`,
  removed: (name: string) => `${name} deleted.`,
};

export function GeneralPart(props: SectionProps) {
  const navigate = useNavigate();
  const id = props.app.id;
  const [name, setName] = createSignal(props.app.name);
  const save = useAction();
  const danger = useAction();
  const errors = () => [...requiredText(name(), t.theName), ...(fieldErrors(save.error()).name ?? [])];
  const submit = async (e: Event) => {
    e.preventDefault();
    if (requiredText(name(), t.theName).length) return;
    const next = await save.run(() => ok(client.PATCH('/api/admin/applications/{id}', { params: { path: { id } }, body: { name: name().trim() } })));
    if (next) {
      props.onSaved(next);
      toast(t.saved);
    }
  };
  const remove = async () => {
    if (!(await confirmAction(t.removeTitle(props.app.name), t.removeText))) return;
    const done = await danger.run(async () => (await ok(client.DELETE('/api/admin/applications/{id}', { params: { path: { id } } })), true));
    if (done) {
      toast(t.removed(props.app.name));
      navigate('/applications');
    }
  };
  return (
    <>
      <form class="card" novalidate onSubmit={submit}>
        <Field label={t.name} hint={t.nameHint} errors={errors()}>
          {(a) => <input {...a} name="name" value={name()} onInput={(e) => setName(e.currentTarget.value)} maxLength={200} />}
        </Field>
        <ErrorBox error={save.error()} fieldsShown />
        <div class="actions">
          <button class="primary" type="submit" disabled={save.busy() || name().trim() === props.app.name}>
            {t.save}
          </button>
        </div>
      </form>
      <BrandingCard app={props.app} onSaved={props.onSaved} />
      <Show when={may('DELETE /applications/:id', id)}>
        <h2>{t.danger}</h2>
        <div class="card danger-zone">
          <p>{t.removeText}</p>
          <ErrorBox error={danger.error()} />
          <div class="actions">
            <button type="button" class="danger" onClick={remove} disabled={danger.busy()}>
              {t.remove}
            </button>
          </div>
        </div>
      </Show>
    </>
  );
}
