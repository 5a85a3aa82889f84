/**
 * Editing an application's custom profile fields (DESIGN §4.4). The server replaces the whole
 * list on save, so a saved field keeps every property the editor did not touch; only properties
 * the (possibly changed) type does not allow are dropped, as the server refuses them.
 */
import type { ProfileField } from './api';
import { checkProfileFieldDefinitions, PROFILE_KEY_PATTERN } from '../../server/applications/profile-fields';
import { fieldName } from './api/problem';

export const FIELD_TYPES = ['string', 'text', 'number', 'integer', 'boolean', 'email', 'url', 'date', 'select'];

/** Types that take `min` / `max`. */
export const hasRange = (type: string): boolean => type === 'number' || type === 'integer';
/** Types that take `max_length`. */
export const hasMaxLength = (type: string): boolean => ['string', 'text', 'email', 'url'].includes(type);

/**
 * A field being edited. The options box keeps its raw text (split only on save), so typing
 * "a, b" is not re-joined under the cursor on every keystroke.
 */
export interface FieldDraft {
  field: ProfileField;
  optionsText: string;
}

export function draftOf(field: ProfileField): FieldDraft {
  return { field: { ...field }, optionsText: (field.options ?? []).join(', ') };
}

export function splitOptions(text: string): string[] {
  return text
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
}

/** A number input's value as an optional limit: empty (or not a number) means no limit. */
export function limitOf(value: string): number | undefined {
  const n = value.trim() === '' ? NaN : Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** The wire shape of an edited field. */
export function fieldForSave(draft: FieldDraft): ProfileField {
  const out: ProfileField = { ...draft.field, key: draft.field.key.trim(), label: draft.field.label.trim() };
  if (out.type === 'select') out.options = splitOptions(draft.optionsText);
  else delete out.options;
  if (!hasRange(out.type) || out.min === undefined) delete out.min;
  if (!hasRange(out.type) || out.max === undefined) delete out.max;
  if (!hasMaxLength(out.type) || out.max_length === undefined) delete out.max_length;
  const description = out.description?.trim();
  if (description) out.description = description;
  else delete out.description;
  return out;
}

const words = {
  key: (n: number) => `Profile field ${n}: the key must start with a letter and hold only letters, digits and _ (at most 64).`,
  label: (n: number) => `Profile field ${n}: the label is required.`,
  sentence: (s: string) => s.charAt(0).toUpperCase() + s.slice(1) + (/[.!?]$/.test(s) ? '' : '.'),
};

/**
 * Every problem of an edited list, in words, as the server's own checks would find them
 * (server/applications/profile-fields.ts, imported: one place for the rule).
 */
export function profileFieldErrors(fields: ProfileField[]): string[] {
  const out: string[] = [];
  fields.forEach((f, i) => {
    if (!PROFILE_KEY_PATTERN.test(f.key)) out.push(words.key(i + 1));
    if (!f.label) out.push(words.label(i + 1));
  });
  for (const e of checkProfileFieldDefinitions(fields, 'profile_fields')) out.push(`${fieldName(e.path)}: ${e.message}.`);
  return out;
}
