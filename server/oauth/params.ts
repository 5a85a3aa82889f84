/**
 * Reading OAuth parameters (RFC 6749 §3.1, §3.2): unknown parameters are ignored, a parameter
 * given twice is `invalid_request`, an empty value counts as absent. This is why the OAuth
 * endpoints read their query/form with these helpers instead of a closed schema.
 */
import type { EarlyCall } from '../http/early-answers.js';
import { invalidRequest } from './errors.js';

export type RawParams = Record<string, unknown>;

/**
 * What the OAuth endpoints read of a request (address, headers, parsed form): a FastifyRequest,
 * or a call answered before Fastify (http/early-answers.ts).
 */
export type OAuthCall = EarlyCall;

/** Form bodies of the OAuth endpoints are limited to this many bytes (beyond: `invalid_request`). */
export const FORM_BODY_LIMIT = 16 * 1024;

/** The single value of `name`, or undefined when absent or empty. */
export function param(params: RawParams | undefined, name: string): string | undefined {
  const value = params?.[name];
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) throw invalidRequest(`The ${name} parameter must not be repeated.`);
  if (typeof value !== 'string') throw invalidRequest(`The ${name} parameter is not valid.`);
  return value === '' ? undefined : value;
}

export function requiredParam(params: RawParams | undefined, name: string): string {
  const value = param(params, name);
  if (value === undefined) throw invalidRequest(`The ${name} parameter is required.`);
  return value;
}
