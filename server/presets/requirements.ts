/**
 * What Test sign-in checks after the sign-in (spec presets-and-operations.md: "Test sign-in runs
 * the preset's own requirements after the sign-in … and shows each as pass/fail in words"): each
 * of the preset's requirements against the tokens the test received. The tokens were just issued
 * by this server, so their contents are read, not verified again.
 */
import { decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose';
import type { AppliedPreset } from '../db/schema.js';
import { findPreset } from './catalogue/index.js';
import type { Requirement } from './types.js';

export interface TestTokens {
  access_token: string;
  id_token?: string | undefined;
  refresh_token?: string | undefined;
  scope?: string | undefined;
}

export interface CheckResult {
  text: string;
  passed: boolean;
  detail: string;
}

function payloadOf(jwt: string | undefined): JWTPayload | undefined {
  if (!jwt) return undefined;
  try {
    return decodeJwt(jwt);
  } catch {
    return undefined;
  }
}

const show = (value: unknown) => (typeof value === 'string' ? `"${value}"` : JSON.stringify(value));

function check(requirement: Requirement, tokens: TestTokens): Omit<CheckResult, 'text'> {
  const id = payloadOf(tokens.id_token);
  const noIdToken = { passed: false, detail: 'no ID token was issued (the scope openid was not granted)' };
  switch (requirement.kind) {
    case 'refreshToken':
      return tokens.refresh_token
        ? { passed: true, detail: 'a refresh token was issued' }
        : { passed: false, detail: `no refresh token (granted scope: ${tokens.scope ?? 'none'}; Gatehouse issues one for offline_access with the refresh_token grant)` };
    case 'idTokenAlg': {
      if (!tokens.id_token) return noIdToken;
      const alg = decodeProtectedHeader(tokens.id_token).alg;
      return alg === requirement.alg ? { passed: true, detail: `signed with ${alg}` } : { passed: false, detail: `signed with ${alg}, not ${requirement.alg}` };
    }
    case 'claim':
    case 'claimTrue':
    case 'claimOneOf':
    case 'claimList': {
      if (!id) return noIdToken;
      const value = id[requirement.claim];
      if (value === undefined || value === null || value === '') return { passed: false, detail: `the ID token has no ${requirement.claim}` };
      if (requirement.kind === 'claimTrue') {
        return value === true ? { passed: true, detail: `${requirement.claim} is true` } : { passed: false, detail: `${requirement.claim} is ${show(value)}` };
      }
      if (requirement.kind === 'claimOneOf') {
        return requirement.values.some((v) => JSON.stringify(v) === JSON.stringify(value))
          ? { passed: true, detail: `${requirement.claim} is ${show(value)}` }
          : { passed: false, detail: `${requirement.claim} is ${show(value)}, not one of ${requirement.values.map(show).join(', ')}` };
      }
      if (requirement.kind === 'claimList') {
        return Array.isArray(value) ? { passed: true, detail: `${requirement.claim} is ${show(value)}` } : { passed: false, detail: `${requirement.claim} is ${show(value)}, not a list` };
      }
      return { passed: true, detail: `${requirement.claim} is ${show(value)}` };
    }
    case 'accessTokenClaim': {
      const value = payloadOf(tokens.access_token)?.[requirement.claim];
      if (value === undefined) return { passed: false, detail: `the access token has no ${requirement.claim}` };
      if (requirement.values && !requirement.values.some((v) => JSON.stringify(v) === JSON.stringify(value))) {
        return { passed: false, detail: `${requirement.claim} is ${show(value)}, not one of ${requirement.values.map(show).join(', ')}` };
      }
      return { passed: true, detail: `${requirement.claim} is ${show(value)}` };
    }
  }
}

/** The checks of the preset an application came from (none for an application made without one). */
export function presetChecks(origin: AppliedPreset | null, tokens: TestTokens): CheckResult[] {
  const preset = origin ? findPreset(origin.id) : undefined;
  if (!preset || !origin) return [];
  return preset.requirements(origin.inputs).map((requirement) => ({ text: requirement.text, ...check(requirement, tokens) }));
}
