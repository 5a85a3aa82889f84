/**
 * Validating an authorization request once its client and redirect URI are known
 * (RFC 6749 §4.1.1, OAuth 2.1 §4.1.1, OIDC Core §3.1.2.1, RFC 8707):
 * - `response_type` must be `code` (`unsupported_response_type`);
 * - `scope` from the supported set; other names are `invalid_scope`, or dropped when the
 *   application's `unknownScopes` is `ignore` (scopes.ts);
 * - `response_mode` is read before this (response-mode.ts), so its errors go back in that mode;
 * - PKCE `S256` only; required for `spa`/`native`, optional for `web` (`invalid_request`);
 * - `resource` absent or equal to the application's audience (`invalid_target`);
 * - `prompt` values from {none, login, consent, select_account}, `none` alone; `max_age` a
 *   non-negative integer (`invalid_request`);
 * - `acr_values` (OIDC Core §3.1.2.1): listing `urn:gatehouse:acr:mfa` without
 *   `urn:gatehouse:acr:pwd` asks for a multi-factor sign-in; unknown values are ignored.
 */
import type { Application } from '../../db/schema.js';
import { invalidRequest, invalidTarget, OAuthError } from '../errors.js';
import { param, type RawParams } from '../params.js';
import { isValidChallenge } from '../pkce.js';
import { parseScope } from '../scopes.js';
import { acrValuesDemandMfa } from '../../accounts/second-factor/factors.js';

export interface AuthorizeRequest {
  scope: string;
  codeChallenge: string | null;
  resource: string;
  nonce: string | null;
  prompt: 'none' | 'login' | undefined;
  /** `prompt` holds `consent`: an application with explicit consent asks the person again (consent.ts). */
  consentDemanded: boolean;
  maxAgeSeconds: number | undefined;
  /** `acr_values` asks for a multi-factor sign-in only (`urn:gatehouse:acr:mfa`). */
  mfaRequested: boolean;
}

const MAX_NONCE = 512;

const PROMPTS = new Set(['none', 'login', 'consent', 'select_account']);

/**
 * `prompt` (OIDC Core §3.1.2.1) as the one thing it changes here. `none` must stand alone.
 * `login` and `select_account` both go to the sign-in page, where the person can also sign in as
 * someone else. `consent` shows the consent page again for an application with explicit consent
 * (oauth/consent.ts); for one with implicit consent (the administrator consented for the team) it
 * asks nothing more, so offline_access clients that always send it (OIDC Core §11) work.
 */
export function promptValues(raw: string | undefined): Set<string> {
  return new Set((raw ?? '').split(' ').filter(Boolean));
}

function parsePrompt(raw: string | undefined): AuthorizeRequest['prompt'] {
  if (raw === undefined) return undefined;
  const values = new Set(raw.split(' ').filter(Boolean));
  if (values.size === 0 || [...values].some((value) => !PROMPTS.has(value))) {
    throw invalidRequest('prompt may hold only none, login, consent and select_account.');
  }
  if (values.has('none')) {
    if (values.size > 1) throw invalidRequest('prompt=none must not be combined with other values.');
    return 'none';
  }
  return values.has('login') || values.has('select_account') ? 'login' : undefined;
}

export function parseAuthorizeRequest(app: Application, query: RawParams): AuthorizeRequest {
  const responseType = param(query, 'response_type');
  if (responseType === undefined) throw invalidRequest('The response_type parameter is required.');
  if (responseType !== 'code') throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported.');
  if (param(query, 'request') !== undefined) throw new OAuthError('request_not_supported', 'Request objects are not supported.');
  if (param(query, 'request_uri') !== undefined) throw new OAuthError('request_uri_not_supported', 'request_uri is not supported.');

  const scope = parseScope(param(query, 'scope'), app.unknownScopes).join(' ');

  const challenge = param(query, 'code_challenge');
  const method = param(query, 'code_challenge_method');
  if (method !== undefined && method !== 'S256') throw invalidRequest('Only code_challenge_method=S256 is supported.');
  if (challenge !== undefined) {
    if (method === undefined) throw invalidRequest('code_challenge_method=S256 is required with a code_challenge (plain is not supported).');
    if (!isValidChallenge(challenge)) throw invalidRequest('code_challenge must be the 43-character base64url SHA-256 of the verifier.');
  } else if (method !== undefined) {
    throw invalidRequest('code_challenge_method was sent without a code_challenge.');
  } else if (app.clientType !== 'web') {
    throw invalidRequest('PKCE (code_challenge with S256) is required for this client.');
  }

  if (Array.isArray(query.resource)) throw invalidTarget('Only one resource may be requested.');
  const resource = param(query, 'resource') ?? app.audience;
  if (resource !== app.audience) throw invalidTarget('The requested resource is not this application\'s audience.');

  const nonce = param(query, 'nonce') ?? null;
  if (nonce && nonce.length > MAX_NONCE) throw invalidRequest(`nonce must be at most ${MAX_NONCE} characters.`);

  const prompt = parsePrompt(param(query, 'prompt'));
  const consentDemanded = promptValues(param(query, 'prompt')).has('consent');

  const maxAgeRaw = param(query, 'max_age');
  let maxAgeSeconds: number | undefined;
  if (maxAgeRaw !== undefined) {
    if (!/^\d{1,10}$/.test(maxAgeRaw)) throw invalidRequest('max_age must be a non-negative integer number of seconds.');
    maxAgeSeconds = Number(maxAgeRaw);
  }

  const acrValues = param(query, 'acr_values');
  if (acrValues !== undefined && acrValues.length > 1000) throw invalidRequest('acr_values is too long.');

  return { scope, codeChallenge: challenge ?? null, resource, nonce, prompt, consentDemanded, maxAgeSeconds, mfaRequested: acrValuesDemandMfa(acrValues) };
}
