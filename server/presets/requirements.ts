/**
 * What Test sign-in checks after the sign-in (spec presets-and-operations.md: "Test sign-in runs
 * the preset's own requirements after the sign-in … and shows each as pass/fail in words"): each
 * of the preset's requirements against the tokens the test received (`presetChecks`; they were
 * just issued by this server, so their contents are read, not verified again), or against what a
 * chosen member's tokens would carry (`presetChecksOfClaims`, from the claims preview).
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

/** What the checks look at: the ID token's claims and algorithm, the access token's claims, a refresh token. */
export interface TokenView {
  /** The ID token's claims; undefined when none is issued (no `openid` scope). */
  id: Record<string, unknown> | undefined;
  idAlg: string | undefined;
  access: Record<string, unknown> | undefined;
  refreshToken: boolean;
  scope: string | undefined;
}

function check(requirement: Requirement, tokens: TokenView): Omit<CheckResult, 'text'> {
  const id = tokens.id;
  const noIdToken = { passed: false, detail: 'no ID token was issued (the scope openid was not granted)' };
  switch (requirement.kind) {
    case 'refreshToken':
      return tokens.refreshToken
        ? { passed: true, detail: 'a refresh token was issued' }
        : { passed: false, detail: `no refresh token (granted scope: ${tokens.scope ?? 'none'}; Gatehouse issues one for offline_access with the refresh_token grant)` };
    case 'idTokenAlg': {
      if (!id) return noIdToken;
      const alg = tokens.idAlg;
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
      const value = tokens.access?.[requirement.claim];
      if (value === undefined) return { passed: false, detail: `the access token has no ${requirement.claim}` };
      if (requirement.values && !requirement.values.some((v) => JSON.stringify(v) === JSON.stringify(value))) {
        return { passed: false, detail: `${requirement.claim} is ${show(value)}, not one of ${requirement.values.map(show).join(', ')}` };
      }
      return { passed: true, detail: `${requirement.claim} is ${show(value)}` };
    }
  }
}

/** The checks of the preset an application came from against a view of its tokens (none without a preset). */
export function presetChecksOfClaims(origin: AppliedPreset | null, view: TokenView): CheckResult[] {
  const preset = origin ? findPreset(origin.id) : undefined;
  if (!preset || !origin) return [];
  return preset.requirements(origin.inputs).map((requirement) => ({ text: requirement.text, ...check(requirement, view) }));
}

/** The checks of the preset an application came from against the tokens a test sign-in received. */
export function presetChecks(origin: AppliedPreset | null, tokens: TestTokens): CheckResult[] {
  return presetChecksOfClaims(origin, {
    id: payloadOf(tokens.id_token),
    idAlg: tokens.id_token ? decodeProtectedHeader(tokens.id_token).alg : undefined,
    access: payloadOf(tokens.access_token),
    refreshToken: Boolean(tokens.refresh_token),
    scope: tokens.scope,
  });
}
