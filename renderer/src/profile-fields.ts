/**
 * Editing an application's custom profile fields (DESIGN §4.4). The server replaces the whole
 * list on save, so a saved field keeps every property the editor did not touch; only properties
 * the (possibly changed) type does not allow are dropped, as the server refuses them.
 */
import type { ProfileField } from './api';

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
