/**
 * Translations of the hosted pages and e-mails (issue 25, item 14), with i18next over message
 * catalogues kept in the repo (`server/i18n/messages/<locale>.json`, read on a language's first
 * use, like the page templates).
 *
 * Catalogue strings are trusted HTML fragments (they may hold <strong>, <em> and <code>, nothing
 * else; test/unit/i18n-catalogues.test.ts checks it) and every interpolated value is HTML-escaped
 * by i18next, so a translation is written into a page as it is (`<%~ it.t(...) %>`). E-mail text
 * parts ask for plain text (`text()`), which unescapes nothing because nothing was escaped.
 *
 * Which language a browser gets: the `gatehouse_lang` cookie (the language switch), else its
 * `Accept-Language` (negotiator, the HTTP negotiation library Express and Fastify use), else the
 * installation's `GATEHOUSE_LOCALE`.
 */
import { readFileSync } from 'node:fs';
import { createInstance, type i18n, type TFunction } from 'i18next';
import Negotiator from 'negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { installPath } from '../util/install-paths.js';
import { escapeHtml } from '../util/html.js';
import { DEFAULT_LOCALE, LOCALES, isLocale, type Locale } from './locales.js';

export { LOCALES, LOCALE_NAMES, isLocale, type Locale } from './locales.js';

export type Translate = TFunction;

let html: i18n | undefined;
let plain: i18n | undefined;

function catalogue(locale: Locale): Record<string, unknown> {
  return JSON.parse(readFileSync(installPath('server', 'i18n', 'messages', `${locale}.json`), 'utf8')) as Record<string, unknown>;
}

function instance(escapeValue: boolean): i18n {
  const one = createInstance();
  void one.init({
    lng: DEFAULT_LOCALE,
    fallbackLng: DEFAULT_LOCALE,
    supportedLngs: [...LOCALES],
    resources: {},
    initAsync: false,
    // Our own escaping (i18next's also turns `/` into an entity, which URLs in messages need not).
    interpolation: { escapeValue, escape: escapeHtml },
    returnNull: false,
    // Keys are nested objects in the catalogues: `signIn.title`.
    keySeparator: '.',
    nsSeparator: false,
  });
  return one;
}

const loaded = new Set<Locale>();

/** Makes sure both instances hold `locale` (and the fallback), reading each catalogue once. */
function load(locale: Locale): void {
  html ??= instance(true);
  plain ??= instance(false);
  for (const one of new Set<Locale>([DEFAULT_LOCALE, locale])) {
    if (loaded.has(one)) continue;
    const messages = catalogue(one);
    html.addResourceBundle(one, 'translation', messages, true, true);
    plain.addResourceBundle(one, 'translation', messages, true, true);
    loaded.add(one);
  }
}

/** Key-only translations remembered per language, at most this many (keys are a fixed set in practice). */
const MEMO_LIMIT = 4000;
const fixed = new Map<Locale, Translate>();

/**
 * Translations for HTML: interpolated values are escaped. One function per language; a message
 * asked for by its key alone (no values to interpolate) is looked up once and remembered, as a
 * catalogue never changes once read: a page asks for a dozen such messages on every render.
 */
export function translator(locale: Locale): Translate {
  load(locale);
  let t = fixed.get(locale);
  if (!t) {
    const base = html!.getFixedT(locale) as unknown as (...args: unknown[]) => unknown;
    const memo = new Map<string, unknown>();
    t = ((...args: unknown[]) => {
      const key = args[0];
      if (args.length !== 1 || typeof key !== 'string') return base(...args);
      let message = memo.get(key);
      if (message === undefined) {
        message = base(key);
        if (memo.size < MEMO_LIMIT) memo.set(key, message);
      }
      return message;
    }) as unknown as Translate;
    fixed.set(locale, t);
  }
  return t;
}

/** Translations for plain text (e-mail text parts, headers): nothing is escaped. */
export function textTranslator(locale: Locale): Translate {
  load(locale);
  return plain!.getFixedT(locale);
}

/** Whether the catalogues have a message under `key` (problem codes without one keep their own words). */
export function hasMessage(locale: Locale, key: string): boolean {
  load(locale);
  return html!.exists(key, { lng: locale });
}

export const LANGUAGE_COOKIE = 'gatehouse_lang';
const LANGUAGE_COOKIE_TTL = 365 * 24 * 3600;

/**
 * The language cookie's name: `__Host-` prefixed under HTTPS like the other cookies (no sibling
 * host may set it), so the switch survives only on this origin.
 */
export function languageCookieName(config: Config): string {
  return config.issuer.startsWith('https:') ? `__Host-${LANGUAGE_COOKIE}` : LANGUAGE_COOKIE;
}

/** Sets the language switch's choice for a year. */
export function setLanguageCookie(config: Config, reply: FastifyReply, locale: Locale): void {
  reply.setCookie(languageCookieName(config), locale, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: config.issuer.startsWith('https:'),
    maxAge: LANGUAGE_COOKIE_TTL,
  });
}

/** The best supported language for an `Accept-Language` header, or undefined when none fits. */
export function fromAcceptLanguage(header: string | undefined): Locale | undefined {
  if (!header) return undefined;
  const best = new Negotiator({ headers: { 'accept-language': header.slice(0, 500) } }).language([...LOCALES]);
  // negotiator answers the first offered language when the header accepts `*` only: that counts.
  return isLocale(best) ? best : undefined;
}

const chosen = new WeakMap<FastifyRequest, Locale>();

/** The language of a request's page: the switch's cookie, else Accept-Language, else the installation's. */
export function requestLocale(config: Config, request: FastifyRequest): Locale {
  const known = chosen.get(request);
  if (known) return known;
  const cookie = request.cookies?.[languageCookieName(config)];
  const header = request.headers['accept-language'];
  const locale = isLocale(cookie) ? cookie : (fromAcceptLanguage(typeof header === 'string' ? header : undefined) ?? config.locale);
  chosen.set(request, locale);
  return locale;
}

/** The request's language and its HTML translator. */
export function pageText(config: Config, request: FastifyRequest): { locale: Locale; t: Translate } {
  const locale = requestLocale(config, request);
  return { locale, t: translator(locale) };
}
