/**
 * Hosted HTML pages: Eta templates with auto-escaping, one shared layout, and the headers every
 * page gets — a strict CSP (no scripts, but our own on pages with passkey or password controls;
 * forms may post only to this origin; never framed)
 * and `Cache-Control: no-store`, since pages carry CSRF tokens and personal details.
 *
 * Every page speaks the reader's language (i18n/index.ts): templates get `it.t` (translations are
 * trusted HTML with escaped values, written with `<%~ %>`), `<html lang>` is set, and the footer
 * offers the language switch. A page for an application carries its branding (brand.ts): its
 * logo and, through a stylesheet of its own, its accent colour.
 *
 * Templates live in `server/pages/templates/`, found through the install root (util/install-paths.ts).
 */
import { existsSync } from 'node:fs';
import type { FastifyReply } from 'fastify';
import { Eta } from 'eta';
import { installPath } from '../util/install-paths.js';
import { escapeHtml } from '../util/html.js';
import { PASSWORD_MAX_LENGTH } from '../accounts/passwords.js';
import { knownPasswordPolicy, type PasswordPolicy } from '../accounts/password-policy.js';
import { LOCALES, LOCALE_NAMES, pageText, type Translate } from '../i18n/index.js';
import type { PageBrand } from './brand.js';

export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Where a folder of `server/pages/` lives (read from server/ by every build). */
export function pagesFolder(name: 'templates' | 'assets'): string {
  const folder = installPath('server', 'pages', name);
  if (!existsSync(folder)) throw new Error(`page ${name} not found in ${folder}`);
  return folder;
}

let eta: Eta | undefined;
function engine(): Eta {
  eta ??= new Eta({ views: pagesFolder('templates'), autoEscape: true, cache: true });
  return eta;
}

/** Where the pages' passkey script is served (server/pages/client/webauthn.ts). */
export const PAGE_SCRIPT_PATH = '/assets/webauthn.js';
/** The pages' own module (show-password, password rules and strength, count-downs: server/pages/client/pages.ts). */
export const PAGES_MODULE_PATH = '/assets/js/pages.js';

/**
 * The page CSP, with extra `form-action` sources when a form's answer redirects onward: Chromium
 * applies `form-action` to every redirect after a submission, so a sign-in form that resumes an
 * authorization request must also allow the origins the application's redirect URIs live on.
 * Pages with scripts may run our own (`script-src 'self'`) and let them call our own API
 * (`connect-src 'self'`), nothing inline and nothing from elsewhere.
 */
export function pageCsp(formActionSources: string[] = [], scripts = false, origin?: string): string {
  let csp = PAGE_CSP;
  if (formActionSources.length) csp = csp.replace("form-action 'self'", ["form-action 'self'", ...formActionSources].join(' '));
  if (origin) {
    csp = csp
      .replace("style-src 'self'", `style-src 'self' ${origin}`)
      .replace("img-src 'self'", `img-src 'self' ${origin}`)
      .replace("form-action 'self'", `form-action 'self' ${origin}`)
      .replace("base-uri 'none'", `base-uri ${origin}`);
  }
  if (scripts) csp = csp.replace("default-src 'none';", "default-src 'none'; script-src 'self'; connect-src 'self';");
  return csp;
}

export interface PageOptions {
  formActionSources?: string[];
  /** The passkey script. */
  scripts?: boolean;
  /** The pages' module (password fields, count-downs). */
  pageModule?: boolean;
  /** The application whose page this is: its name, logo and accent colour. */
  brand?: PageBrand | undefined;
  /**
   * Where the language switch comes back to: the address a GET of this page has. Defaults to the
   * request's own URL for a GET; a form's answer names its page (or the switch lands on /account).
   */
  here?: string | undefined;
  /**
   * The page is served on another host, through its proxy (forward auth's refusal and hand-over
   * pages on a protected host): `<base href>` makes its stylesheet, logo and links the issuer's,
   * and the CSP allows that origin for them.
   */
  origin?: string | undefined;
}

/** A same-origin path the language switch may come back to (never another site). */
export function localPath(raw: string | undefined): string | undefined {
  if (!raw || !raw.startsWith('/') || raw.startsWith('//') || raw.length > 4000 || !/^[\x21-\x5b\x5d-\x7e]+$/.test(raw)) return undefined;
  return raw;
}

/**
 * The password policy in words, worked out once per policy (a re-read makes a new object) and
 * language: every page renders it (the layout passes its data on to every template), and it was
 * three translations with values on each render.
 */
const rulesInWords = new WeakMap<PasswordPolicy, Map<string, string>>();
function passwordRules(policy: PasswordPolicy, locale: string, t: Translate): string {
  let byLocale = rulesInWords.get(policy);
  if (!byLocale) rulesInWords.set(policy, (byLocale = new Map()));
  let words = byLocale.get(locale);
  if (words === undefined) {
    words = [
      t('password.rules', { min: policy.minLength }),
      policy.minStrength > 0 ? t('password.rulesStrength', { strength: t(`password.strength.${policy.minStrength}`) }) : '',
      policy.rejectBreached ? t('password.rulesCommon') : '',
    ].filter(Boolean).join(' ');
    byLocale.set(locale, words);
  }
  return words;
}

/** The language switch's links, remembered for the few fixed addresses pages come back to (`/account`). */
const switchLinks = new Map<string, { code: string; name: string; current: boolean; href: string }[]>();
function languageLinks(locale: string, here: string) {
  const key = `${locale} ${here}`;
  const known = switchLinks.get(key);
  if (known) return known;
  const links = LOCALES.map((code) => ({
    code,
    name: LOCALE_NAMES[code],
    current: code === locale,
    href: `/language/${code}?${new URLSearchParams({ next: here }).toString()}`,
  }));
  if (here.length <= 64 && switchLinks.size < 256) switchLinks.set(key, links);
  return links;
}

/** Renders `templates/<templateName>.eta` inside the layout and sends it as the reply. */
export function renderPage(
  reply: FastifyReply,
  templateName: string,
  data: Record<string, unknown> & { title: string },
  options: PageOptions = {},
): FastifyReply {
  const request = reply.request;
  const { locale, t } = pageText(reply.server.ctx.config, request);
  const here = localPath(options.here ?? (request.method === 'GET' ? request.url : undefined)) ?? '/account';
  const brand = options.brand;
  const brandName = brand ? escapeHtml(brand.name) : undefined;
  const policy = knownPasswordPolicy(reply.server.ctx.db);
  const html = engine().render(templateName, {
    ...data,
    t,
    lang: locale,
    brand,
    passwordMin: policy.minLength,
    passwordMax: PASSWORD_MAX_LENGTH,
    // The password policy in words, beside every new-password field (accounts/password-policy.ts).
    passwordRules: passwordRules(policy, locale, t),
    // The browser tab names the application too when the title does not already (HTML: titles are).
    fullTitle: [data.title, brandName && !data.title.includes(brandName) ? brandName : undefined, 'Gatehouse'].filter(Boolean).join(' · '),
    languages: languageLinks(locale, here),
    script: options.scripts ? PAGE_SCRIPT_PATH : undefined,
    pageModule: options.pageModule ? PAGES_MODULE_PATH : undefined,
    base: options.origin ? `${options.origin}/` : undefined,
  });
  return reply
    .header('content-security-policy', pageCsp(options.formActionSources, Boolean(options.scripts || options.pageModule), options.origin))
    .header('cache-control', 'no-store')
    .header('content-language', locale)
    .type('text/html; charset=utf-8')
    .send(html);
}

/** An error page with `status`; title and message are already in the reader's words (HTML-safe). */
export function renderError(
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
  options: PageOptions & { link?: { href: string; label: string } } = {},
): FastifyReply {
  // The language switch of an error page leads to the account page unless told otherwise: the
  // failed address may hold what should not be repeated into links (a provider's callback query).
  return renderPage(reply.status(status), 'error', { title, message, link: options.link }, { here: '/account', ...options });
}
