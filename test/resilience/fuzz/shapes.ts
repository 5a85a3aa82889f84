/**
 * The documented answer for hostile input (DESIGN §4.1): never a 5xx, never a stack trace, and
 * every error in its route's shape. Throws a plain Error naming the broken rule, so fast-check
 * shrinks the case and reports it with its seed.
 */
import type { LightMyRequestResponse } from 'fastify';
import type { Shape } from './requests.js';

const STACK_TRACE = /\n\s+at [^\n]+:\d+:\d+/;
const PROBLEM_KEYS = ['type', 'title', 'status', 'detail', 'code'];
/** RFC 6749 §5.2: `error` is drawn from %x20-21 / %x23-5B / %x5D-7E. */
const OAUTH_ERROR = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

function fail(rule: string, res: LightMyRequestResponse): never {
  const headers = JSON.stringify({ 'content-type': res.headers['content-type'], 'cache-control': res.headers['cache-control'] });
  throw new Error(`${rule}: got ${res.statusCode} ${headers} ${res.body.slice(0, 300)}`);
}

function parseJson(res: LightMyRequestResponse): Record<string, unknown> {
  try {
    const body = JSON.parse(res.body) as unknown;
    if (body && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // reported below
  }
  fail('error body is not a JSON object', res);
}

function expectProblemShape(res: LightMyRequestResponse): void {
  if (res.headers['content-type'] !== 'application/problem+json; charset=utf-8') fail('expected application/problem+json', res);
  const body = parseJson(res);
  const extra = Object.keys(body).filter((k) => !PROBLEM_KEYS.includes(k) && k !== 'errors');
  if (extra.length) fail(`unexpected problem fields ${extra.join(', ')}`, res);
  const { type, title, status, detail, code, errors } = body;
  if (typeof code !== 'string' || !/^[a-z][a-z0-9_]*$/.test(code)) fail('problem code must be snake_case', res);
  if (type !== `https://gatehouse.dev/problems/${code.replaceAll('_', '-')}`) fail('problem type must follow its code', res);
  if (status !== res.statusCode) fail('problem status must equal the HTTP status', res);
  if (typeof title !== 'string' || !title || typeof detail !== 'string' || !detail) fail('problem title and detail must be text', res);
  if (errors !== undefined) {
    const ok = Array.isArray(errors) && errors.every((e) => e && typeof e.path === 'string' && typeof e.message === 'string');
    if (!ok) fail('problem errors must be [{path, message}]', res);
  }
}

function expectOAuthShape(res: LightMyRequestResponse): void {
  if (!String(res.headers['content-type']).startsWith('application/json')) fail('expected an application/json OAuth error', res);
  if (res.headers['cache-control'] !== 'no-store') fail('OAuth errors carry Cache-Control: no-store', res);
  const body = parseJson(res);
  const extra = Object.keys(body).filter((k) => k !== 'error' && k !== 'error_description');
  if (extra.length) fail(`unexpected OAuth error fields ${extra.join(', ')}`, res);
  if (typeof body.error !== 'string' || !OAUTH_ERROR.test(body.error)) fail('OAuth error must be an RFC 6749 code', res);
  if (typeof body.error_description !== 'string' || !OAUTH_ERROR.test(body.error_description)) {
    fail('OAuth error_description must be RFC 6749 text', res);
  }
}

function expectPageShape(res: LightMyRequestResponse): void {
  if (res.headers['content-type'] !== 'text/html; charset=utf-8') fail('expected an HTML error page', res);
  if (res.headers['cache-control'] !== 'no-store') fail('error pages carry Cache-Control: no-store', res);
  if (!String(res.headers['content-security-policy']).includes("frame-ancestors 'none'")) fail('error pages carry the page CSP', res);
  if (!/^<!doctype html>/i.test(res.body.trimStart())) fail('error page must be an HTML document', res);
}

/** Asserts the documented answer for `shape`; 1xx–3xx pass, as long as nothing failed on our side. */
export function expectDocumentedAnswer(shape: Shape, method: string, res: LightMyRequestResponse): void {
  if (res.statusCode >= 500) fail('server error', res);
  if (STACK_TRACE.test(res.body)) fail('stack trace in the answer', res);
  if (res.statusCode < 400 || method === 'HEAD') return;
  if (res.statusCode === 429 && !/^\d+$/.test(String(res.headers['retry-after']))) fail('429 needs Retry-After', res);
  if (shape === 'problem') expectProblemShape(res);
  else if (shape === 'oauth') expectOAuthShape(res);
  else expectPageShape(res);
}
