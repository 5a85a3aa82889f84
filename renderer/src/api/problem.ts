/**
 * Problem details (RFC 9457, DESIGN §4.1) in words. The server names a bad field by its wire path
 * (`body.redirectUris.1`); the panel says "Redirect URI on line 2" instead, and a form can put
 * the message under the field it belongs to (`fieldErrors`).
 */

export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  errors?: { path: string; message: string }[];
  error?: string;
  error_description?: string;
}

/** Wire field names in words. A list field's items are lines of its text box (`line`). */
const FIELD_WORDS: Record<string, { label: string; line?: boolean }> = {
  id: { label: 'Client ID' },
  name: { label: 'Name' },
  audience: { label: 'Audience' },
  redirectUris: { label: 'Redirect URI', line: true },
  clientType: { label: 'Type' },
  webhookUrl: { label: 'Webhook URL' },
  webhookSecret: { label: 'Signing secret' },
  emails: { label: 'Address', line: true },
  role: { label: 'Role' },
  message: { label: 'Message' },
  scopes: { label: 'Scopes' },
  signup_policy: { label: 'Who may join' },
  allowed_providers: { label: 'Sign-in methods' },
  profile_fields: { label: 'Profile field', line: true },
  key: { label: 'key' },
  label: { label: 'label' },
  options: { label: 'options' },
  max_length: { label: 'maximum length' },
  min: { label: 'minimum' },
  max: { label: 'maximum' },
  appId: { label: 'Application' },
  username: { label: 'Username' },
  givenName: { label: 'Given name' },
  familyName: { label: 'Family name' },
  emailVerified: { label: 'E-mail verified' },
  description: { label: 'Description' },
  groups: { label: 'Group' },
  customClaims: { label: 'Claim' },
  groupsFilter: { label: 'Group' },
  allowedGroups: { label: 'Allowed group' },
  source: { label: 'value from' },
  group: { label: 'group' },
  map: { label: 'group' },
  value: { label: 'value' },
  default: { label: 'otherwise' },
};

/** The parts of a wire path after `body` / `query` / `params`: `body.redirectUris.1` → ['redirectUris', '1']. */
function parts(path: string): string[] {
  return path
    .replace(/^\/?(body|querystring|query|params)([./]|$)/, '')
    .split(/[./]/)
    .filter(Boolean);
}

/** `body.redirectUris.1` → "Redirect URI on line 2"; `body.profile_fields.0.key` → "Profile field 1: key". */
export function fieldName(path: string): string {
  const [field, index, ...rest] = parts(path);
  if (!field) return '';
  const words = FIELD_WORDS[field];
  const label = words?.label ?? field.replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  if (index === undefined || !/^\d+$/.test(index)) return label;
  const n = Number(index) + 1;
  const head = words?.line && rest.length === 0 ? `${label} on line ${n}` : `${label} ${n}`;
  if (!rest.length) return head;
  return `${head}: ${rest.map((r) => FIELD_WORDS[r]?.label ?? r).join(' ')}`;
}

function sentence(text: string): string {
  const t = text.trim();
  if (!t) return t;
  return t[0]!.toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? '' : '.');
}

export function describeProblem(status: number, p: Problem): string {
  let text = p.detail ?? p.error_description ?? p.title ?? `The server answered ${status}.`;
  if (p.errors?.length) {
    text +=
      ' ' +
      p.errors
        .map((e) => {
          const name = fieldName(e.path);
          return name ? `${name}: ${e.message}` : sentence(e.message);
        })
        .join('; ');
  }
  return text;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(describeProblem(status, problem));
  }
  get code(): string | undefined {
    return this.problem.code ?? this.problem.error;
  }
}

/**
 * The field errors of a failed request, by top-level wire field (`redirectUris`), each as a
 * sentence in words, so a form shows them under the field. Empty for other failures.
 */
export function fieldErrors(error: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (!(error instanceof ApiError)) return out;
  for (const e of error.problem.errors ?? []) {
    const [field, index, ...rest] = parts(e.path);
    if (!field) continue;
    const words = FIELD_WORDS[field];
    const where = index !== undefined && /^\d+$/.test(index) ? (words?.line && !rest.length ? `Line ${Number(index) + 1}: ` : `${fieldName(e.path)}: `) : '';
    (out[field] ??= []).push(where + (where ? e.message : sentence(e.message)));
  }
  return out;
}
