/**
 * The languages of the hosted pages and e-mails (issue 25, item 14). A language is added by a
 * message catalogue in `server/i18n/messages/<code>.json` and one entry here.
 */
export const LOCALES = ['en', 'de', 'fr', 'es'] as const;
export type Locale = (typeof LOCALES)[number];

/** Each language's own name, as the language switch shows it. */
export const LOCALE_NAMES: Readonly<Record<Locale, string>> = { en: 'English', de: 'Deutsch', fr: 'Français', es: 'Español' };

export const DEFAULT_LOCALE: Locale = 'en';

export const isLocale = (value: unknown): value is Locale => typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
