/**
 * Choosing applications by name (an app manager's applications), instead of typing client IDs:
 * the chip picker (chip-picker.tsx) over every application the caller may list.
 */
import { createResource } from 'solid-js';
import { ChipPicker, type PickerWords } from './chip-picker';
import { allApplications } from './pages/applications/list';

const t: PickerWords = {
  search: 'Find an application',
  placeholder: 'Type a name or client ID',
  add: 'Add',
  remove: (name: string) => `Remove ${name}`,
  none: 'None chosen.',
  deleted: 'no longer an application',
  noMatch: (q: string) => `No application matches “${q}”.`,
  suggestions: 'Matching applications',
};

export function ApplicationPicker(props: { label: string; value: readonly string[]; onChange: (ids: string[]) => void; hint?: string }) {
  const [applications] = createResource(allApplications);
  return <ChipPicker {...props} items={applications} words={t} kind="application" hrefOf={(id) => `/applications/${encodeURIComponent(id)}`} />;
}
