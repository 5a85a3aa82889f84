/**
 * The integration pages say what the presets do (issue 37): their generated parts are what
 * scripts/presets-docs.ts writes from the catalogue today, each preset appears on its family's
 * page, and every test a page names as the proof of a preset exists and creates that preset.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../server/presets/catalogue/index.js';
import { FAMILY_PAGES, presetPages } from '../../scripts/presets-docs.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('docs/integrations from the preset catalogue', () => {
  it('every generated part is what `npm run docs:presets` writes now', () => {
    const stale = [...presetPages()].filter(([, { now, wanted }]) => now !== wanted).map(([path]) => path);
    expect(stale, 'run `npm run docs:presets`').toEqual([]);
  });

  it('every preset has its section on its family\'s page', () => {
    const missing = PRESETS.filter((p) => !readFileSync(join(ROOT, 'docs/integrations', FAMILY_PAGES[p.category]), 'utf8').includes(`<a id="${p.id}"></a>`));
    expect(missing.map((p) => p.id)).toEqual([]);
  });

  it('each test named as a preset\'s proof exists and creates that preset', () => {
    const proofs = PRESETS.filter((p) => p.testedWith.test).map((p) => [p.id, p.testedWith.test!] as const);
    const bad = proofs.filter(([id, file]) => {
      if (!existsSync(join(ROOT, file))) return true;
      const text = readFileSync(join(ROOT, file), 'utf8');
      return !text.includes(`preset: '${id}'`) && !text.includes(`'${id}'`);
    });
    expect(bad).toEqual([]);
    // A preset tested or checked by configuration names its test; one from the documentation names none.
    expect(PRESETS.filter((p) => (p.testedWith.status === 'documentation') !== (p.testedWith.test === null)).map((p) => p.id)).toEqual([]);
  });
});
