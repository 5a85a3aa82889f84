/**
 * Custom profile fields of an application's auth policy (DESIGN §4.4): checking a definition list,
 * and validating a person's per-application profile against it on every write — by an
 * administrator (`admin`: any field) or by the person (`self`: only `user_editable` fields).
 *
 * Updates are merges: keys in the update replace stored values, `null` clears an optional field,
 * absent keys keep their value. The merged profile must hold every required field the writer can
 * set (a person cannot be blocked by a required field only an administrator may fill).
 */
import type { Profile, ProfileField } from '../db/schema.js';
import type { FieldError } from '../http/problem.js';
import { displayTextProblem } from '../util/display-text.js';
import { isEmailAddress } from '../util/email.js';

export const PROFILE_KEY_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;
export const MAX_PROFILE_FIELDS = 50;
const DEFAULT_MAX_LENGTH: Record<string, number> = { string: 200, text: 5000, email: 254, url: 2000 };

/** Semantic checks on a `profile_fields` list that a JSON schema cannot express. */
export function checkProfileFieldDefinitions(fields: ProfileField[], path = 'body.profile_fields'): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  fields.forEach((field, i) => {
    const at = `${path}.${i}`;
    if (seen.has(field.key)) errors.push({ path: `${at}.key`, message: `duplicate key "${field.key}"` });
    seen.add(field.key);
    if (field.type === 'select' && (!field.options || field.options.length === 0)) {
      errors.push({ path: `${at}.options`, message: 'is required for select fields' });
    }
    if (field.type !== 'select' && field.options !== undefined) {
      errors.push({ path: `${at}.options`, message: 'is only allowed for select fields' });
    }
    if (field.options && new Set(field.options).size !== field.options.length) {
      errors.push({ path: `${at}.options`, message: 'must not contain duplicates' });
    }
    const numeric = field.type === 'number' || field.type === 'integer';
    if (!numeric && (field.min !== undefined || field.max !== undefined)) {
      errors.push({ path: `${at}.min`, message: 'min and max are only allowed for number and integer fields' });
    }
    if (field.min !== undefined && field.max !== undefined && field.min > field.max) {
      errors.push({ path: `${at}.min`, message: 'must not be greater than max' });
    }
    if (field.max_length !== undefined && !(field.type in DEFAULT_MAX_LENGTH)) {
      errors.push({ path: `${at}.max_length`, message: 'is only allowed for string, text, email and url fields' });
    }
  });
  return errors;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Why `value` is not a valid value of `field`, or undefined when it is. */
function valueProblem(field: ProfileField, value: unknown): string | undefined {
  switch (field.type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (field.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      if (field.min !== undefined && value < field.min) return `must be at least ${field.min}`;
      if (field.max !== undefined && value > field.max) return `must be at most ${field.max}`;
      return undefined;
    }
    default: {
      if (typeof value !== 'string') return 'must be a string';
      const maxLength = field.max_length ?? DEFAULT_MAX_LENGTH[field.type] ?? 200;
      if (value.length > maxLength) return `must be at most ${maxLength} characters`;
      // Profile text is shown in the panel and account pages: no controls, overrides or mark stacks.
      const textProblem = displayTextProblem(value, { multiline: field.type === 'text' });
      if (textProblem) return textProblem;
      if (field.type === 'email' && !isEmailAddress(value)) return 'must be an e-mail address';
      if (field.type === 'url') {
        try {
          const url = new URL(value);
          if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
        } catch {
          return 'must be an absolute URL';
        }
      }
      if (field.type === 'date' && (!DATE.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)))) {
        return 'must be a date (YYYY-MM-DD)';
      }
      if (field.type === 'select' && !field.options?.includes(value)) {
        return `must be one of: ${(field.options ?? []).join(', ')}`;
      }
      return undefined;
    }
  }
}

export type ProfileWriter = 'admin' | 'self';

/**
 * Merges `update` into `current` and validates the result. Returns the new profile, or the list
 * of field errors (each naming `body.profile.<key>`).
 */
export function mergeProfile(
  fields: ProfileField[],
  current: Profile,
  update: Record<string, unknown>,
  writer: ProfileWriter,
): { profile: Profile; errors: [] } | { profile?: undefined; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const next: Profile = {};
  // Keep only values of fields that still exist: removed definitions drop their data on next write.
  for (const [key, value] of Object.entries(current)) if (byKey.has(key)) next[key] = value;

  for (const [key, value] of Object.entries(update)) {
    const path = `body.profile.${key}`;
    const field = byKey.get(key);
    if (!field) {
      errors.push({ path, message: 'is not a profile field of this application' });
      continue;
    }
    if (writer === 'self' && !field.user_editable) {
      errors.push({ path, message: 'cannot be changed by the user' });
      continue;
    }
    if (value === null) {
      if (field.required) errors.push({ path, message: 'is required and cannot be cleared' });
      else delete next[key];
      continue;
    }
    const problem = valueProblem(field, value);
    if (problem) errors.push({ path, message: problem });
    else next[key] = value as string | number | boolean;
  }

  for (const field of fields) {
    const writable = writer === 'admin' || field.user_editable;
    if (field.required && writable && next[field.key] === undefined && !errors.some((e) => e.path.endsWith(`.${field.key}`))) {
      errors.push({ path: `body.profile.${field.key}`, message: 'is required' });
    }
  }
  return errors.length > 0 ? { errors } : { profile: next, errors: [] };
}
