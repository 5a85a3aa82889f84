/**
 * Refusals in the reader's words: a problem's code picks its message in the catalogues
 * (`problems.<code>`), with the wait of a 429 and the fields of a validation failure filled in; a
 * code without a message keeps its own (English) sentence, escaped.
 */
import type { Problem } from '../http/problem.js';
import { hasMessage, type Locale, type Translate } from '../i18n/index.js';
import { escapeHtml } from '../util/html.js';

/** The fields most forms share, named as their labels name them. */
const COMMON_FIELDS: Record<string, string> = { password: 'common.password', name: 'common.name', email: 'common.email' };

/** A refusal as page text (HTML-safe). */
export function problemText(t: Translate, locale: Locale, problem: Problem, labels: Map<string, string> = new Map()): string {
  // Field errors of a form's body name the field; others (a stray query parameter) keep the summary.
  if (problem.code === 'validation_failed' && problem.errors?.length && problem.errors.every((e) => e.path.startsWith('body.'))) {
    return problem.errors
      .map((e) => {
        const key = e.path.replace(/^body\.(profile\.)?/, '');
        return t('errors.fieldProblem', { field: labels.get(key) ?? (COMMON_FIELDS[key] ? t(COMMON_FIELDS[key]) : key), message: e.message });
      })
      .join('; ');
  }
  const key = `problems.${problem.code}`;
  if (!hasMessage(locale, key)) return escapeHtml(problem.detail);
  return t(key, { seconds: problem.headers['retry-after'] ?? '' });
}

/** The heading of an error page with this status. */
export function errorTitle(t: Translate, status: number): string {
  return t([`errors.${status}`, 'errors.other']);
}
