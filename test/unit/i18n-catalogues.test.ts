/**
 * The message catalogues (issue 25, item 14): every language has every message English has, with
 * the same placeholders, and only the HTML a page may take from a catalogue.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LOCALES } from '../../server/i18n/locales.js';
import { fromAcceptLanguage, translator } from '../../server/i18n/index.js';

type Tree = { [key: string]: string | Tree };
const load = (locale: string) => JSON.parse(readFileSync(new URL(`../../server/i18n/messages/${locale}.json`, import.meta.url), 'utf8')) as Tree;

/** Flat `a.b.c` → message; plural variants (`_one`, `_many`, `_other`) count as one key. */
function flatten(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix + key;
    if (typeof value === 'string') out.set(path.replace(/_(zero|one|two|few|many|other)$/, ''), value);
    else for (const [k, v] of flatten(value, `${path}.`)) out.set(k, v);
  }
  return out;
}

const placeholders = (text: string) => [...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();
const tags = (text: string) => [...text.matchAll(/<\/?([a-z]+)[^>]*>/g)].map((m) => m[0]);

describe('message catalogues', () => {
  const english = flatten(load('en'));

  for (const locale of LOCALES) {
    it(`${locale}: the same messages as English, the same placeholders, only <strong>/<em>/<code>/<a href>`, () => {
      const messages = flatten(load(locale));
      expect([...messages.keys()].sort()).toEqual([...english.keys()].sort());
      for (const [key, text] of messages) {
        expect(placeholders(text), `${locale} ${key}`).toEqual(placeholders(english.get(key)!));
        for (const tag of tags(text)) expect(tag, `${locale} ${key}`).toMatch(/^<\/?(strong|em|code)( class="code")?>$|^<a href="\{\{url\}\}">$|^<\/a>$/);
      }
    });
  }

  it('chooses the language by Accept-Language, falling back to none', () => {
    expect(fromAcceptLanguage('de-CH, de;q=0.9, en;q=0.5')).toBe('de');
    expect(fromAcceptLanguage('fr-FR,fr;q=0.9')).toBe('fr');
    expect(fromAcceptLanguage('es-MX')).toBe('es');
    expect(fromAcceptLanguage('ja, zh;q=0.8')).toBeUndefined();
    expect(fromAcceptLanguage(undefined)).toBeUndefined();
  });

  it('counts in each language and escapes what it fills in', () => {
    expect(translator('de')('signIn.locked', { count: 30 })).toBe('Zu viele falsche Passwörter. Versuchen Sie es in 30 Sekunden erneut.');
    expect(translator('fr')('signIn.locked', { count: 1 })).toBe('Trop de mauvais mots de passe. Réessayez dans 1 seconde.');
    expect(translator('es')('signIn.locked', { count: 30 })).toBe('Demasiadas contraseñas incorrectas. Vuelve a intentarlo dentro de 30 segundos.');
    expect(translator('en')('refused.back', { app: '<b>Wiki</b>' })).toBe('Back to &lt;b&gt;Wiki&lt;/b&gt;');
  });
});
