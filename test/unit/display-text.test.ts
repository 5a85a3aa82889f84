/**
 * Display names and profile text (issue 22, item 7): no NUL or other C0/C1 controls, no bidi
 * embedding/override/isolate characters, no stacks of combining marks; real names of every
 * script pass.
 */
import { describe, expect, it } from 'vitest';
import { cleanDisplayText, displayTextProblem } from '../../server/util/display-text.js';

describe('displayTextProblem', () => {
  it('passes names in many scripts, emoji sequences and the marks real words stack', () => {
    for (const name of [
      'Ada Lovelace', 'Nguyễn Văn A', 'Nguye\u0302\u0303n', 'क्षत्रिय', 'ไทยภาษา', 'שָׁלוֹם', 'محمد\u200F', 'José', '김민준',
      '👩‍👩‍👧‍👦 family', 'Zoë O’Brien-Smith', 'a\u0301\u0302\u0303\u0304',
    ]) {
      expect({ name, problem: displayTextProblem(name) }).toEqual({ name, problem: undefined });
    }
  });

  it('refuses controls, bidi overrides and isolates, line separators, stacked marks and broken UTF-16', () => {
    const cases: [string, string][] = [
      ['Ada\u0000', 'must not contain control characters'],
      ['Ada\u0007', 'must not contain control characters'],
      ['Ada\tLovelace', 'must not contain control characters'],
      ['Ada\nLovelace', 'must not contain control characters'],
      ['Ada\u007f', 'must not contain control characters'],
      ['Ada\u0085', 'must not contain control characters'],
      ['Ada\u009b', 'must not contain control characters'],
      ['Ada\u2028', 'must not contain control characters'],
      ['admin\u202Egnp.exe', 'must not contain bidirectional override or isolate characters'],
      ['x\u202A', 'must not contain bidirectional override or isolate characters'],
      ['x\u2066y\u2069', 'must not contain bidirectional override or isolate characters'],
      ['Z\u0301\u0302\u0303\u0304\u0305alg', 'must not stack more than 4 combining marks on one character'],
      ['\u0301\u0301\u0301\u0301\u0301', 'must not stack more than 4 combining marks on one character'],
      ['Ada\ud800', 'must be valid Unicode text'],
    ];
    for (const [text, message] of cases) expect({ text, problem: displayTextProblem(text) }).toEqual({ text, problem: message });
  });

  it('lets multi-line text keep its line breaks and tabs, nothing else', () => {
    expect(displayTextProblem('Dear team,\r\n\tWelcome!\n', { multiline: true })).toBeUndefined();
    expect(displayTextProblem('Dear\u0000team', { multiline: true })).toBe('must not contain control characters');
    expect(displayTextProblem('Dear\u202Eteam', { multiline: true })).toBe('must not contain bidirectional override or isolate characters');
  });

  it('cleans what an external provider sends instead of refusing the sign-in', () => {
    expect(cleanDisplayText('Ada\u0000 \u202ELovelace\u2069\n')).toBe('Ada Lovelace');
    expect(cleanDisplayText('Z\u0301\u0302\u0303\u0304\u0305\u0306alg')).toBe('Z\u0301\u0302\u0303\u0304alg');
    expect(cleanDisplayText('\u0000\u202E')).toBe('');
    expect(cleanDisplayText('Nguyễn')).toBe('Nguyễn');
  });
});
