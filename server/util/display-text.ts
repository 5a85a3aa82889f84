/**
 * What text shown to other people may contain (issue 22): names (people, applications, SSO
 * groups, API keys, profile-field labels) and profile text appear in the control panel, the
 * account pages, e-mails and the audit log, so they must not be able to disguise themselves.
 *
 * - No C0 or C1 control characters (NUL, escape sequences, C1's CSI), nor DEL; line and paragraph
 *   separators count as line breaks. Multi-line text keeps tab, CR and LF.
 * - No bidirectional embeddings, overrides or isolates (U+202A–U+202E, U+2066–U+2069: "Trojan
 *   Source", `admin\u202Egnp.exe` shown as `adminexe.png`). The implicit marks LRM, RLM and ALM
 *   stay allowed: right-to-left names need them and they reorder nothing beyond themselves.
 * - At most 4 combining marks in a row ("Zalgo" text spills over the lines around it); Vietnamese,
 *   Indic scripts and pointed Hebrew need no more than that.
 * - Well-formed UTF-16 (no lone surrogates), which SQLite and JSON would otherwise mangle.
 */

export const MAX_COMBINING_MARKS = 4;

const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const MULTILINE_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/;
// A lone surrogate: one half of a pair without the other (String#isWellFormed is ES2024).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const STACKED_MARKS = new RegExp(`\\p{M}{${MAX_COMBINING_MARKS + 1},}`, 'u');

export interface DisplayTextOptions {
  /** Tab, CR and LF (and line/paragraph separators) are allowed. */
  multiline?: boolean;
}

/** Why `text` may not be shown as a name or profile text, or undefined when it may. */
export function displayTextProblem(text: string, options: DisplayTextOptions = {}): string | undefined {
  if (LONE_SURROGATE.test(text)) return 'must be valid Unicode text';
  if ((options.multiline ? MULTILINE_CONTROLS : CONTROLS).test(text)) return 'must not contain control characters';
  if (BIDI_CONTROLS.test(text)) return 'must not contain bidirectional override or isolate characters';
  if (STACKED_MARKS.test(text)) return `must not stack more than ${MAX_COMBINING_MARKS} combining marks on one character`;
  return undefined;
}

/**
 * For names we do not choose to refuse (what an external sign-in provider says): the same rules,
 * applied by removing what breaks them, with runs of white space folded into one space.
 */
export function cleanDisplayText(text: string): string {
  return text
    .replace(new RegExp(LONE_SURROGATE.source, 'g'), '\ufffd')
    .replace(new RegExp(CONTROLS.source, 'g'), ' ')
    .replace(new RegExp(BIDI_CONTROLS.source, 'g'), '')
    .replace(new RegExp(`(\\p{M}{${MAX_COMBINING_MARKS}})\\p{M}+`, 'gu'), '$1')
    .replace(/\s+/g, ' ')
    .trim();
}
