/**
 * RFC 9457 problem details: errors as values with stable snake_case codes (DESIGN §4.1), and the
 * one place that turns any thrown error into the wire shape. Anything not a `Problem` and not a
 * known Fastify client error becomes a plain 500 with no internals.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { TEXT_FORMATS } from './schemas.js';

export interface FieldError {
  path: string;
  message: string;
  /** Where in a submitted file (1-based), when the input was one: a configuration file (config-as-code). */
  line?: number;
}

/**
 * RFC 9457 `title` per status: the reason phrase, spelled here rather than taken from node:http so
 * it cannot change with the Node version. Every status the project answers with has one
 * (test/unit/problem-titles.test.ts); an unlisted one falls back to "Error".
 */
export const PROBLEM_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};
const titleOf = (status: number) => PROBLEM_TITLES[status] ?? 'Error';

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

// Constructors for the common cases, so call sites read as the rule they enforce.
export const badRequest = (code: string, detail: string, errors?: FieldError[]) =>
  new Problem(400, code, detail, errors);
export const validationFailed = (errors: FieldError[], detail = 'The request is not valid.') =>
  new Problem(400, 'validation_failed', detail, errors);
export const unauthorized = (detail = 'Missing or invalid credentials.', code = 'unauthorized', scheme = 'Bearer') =>
  new Problem(401, code, detail, undefined, { 'www-authenticate': scheme });
export const forbidden = (code: string, detail: string) => new Problem(403, code, detail);
export const notFound = (code: string, detail: string) => new Problem(404, code, detail);
export const conflict = (code: string, detail: string) => new Problem(409, code, detail);
/** A person or group a directory source keeps: changed at the source, not here (spec directory-sources.md). */
export const managedBySource = (detail: string) => new Problem(409, 'managed_by_source', detail);
export const tooManyRequests = (retryAfterSeconds: number, detail = 'Too many requests; try again later.') =>
  new Problem(429, 'rate_limited', detail, undefined, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
}

export function problemBody(problem: Problem): ProblemBody {
  const body: ProblemBody = {
    type: `https://gatehouse.dev/problems/${problem.code.replaceAll('_', '-')}`,
    title: titleOf(problem.status),
    status: problem.status,
    detail: problem.detail,
    code: problem.code,
  };
  if (problem.errors) body.errors = problem.errors;
  return body;
}

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return reply.status(problem.status).type('application/problem+json').send(problemBody(problem));
}

/** Ajv's error objects, as far as they are read here. */
type AjvError = NonNullable<FastifyError['validation']>[number];

/** Maps Ajv validation output to `{path, message}` entries naming the offending field. */
function validationErrors(error: FastifyError): FieldError[] {
  const context = (error as { validationContext?: string }).validationContext ?? 'body';
  return fieldErrors(error.validation ?? [], context);
}

/**
 * Ajv errors as `{path, message}`, each path `context` then the field's names joined by dots
 * (`body.redirectUris.0`); an unknown or missing property is named itself.
 */
export function fieldErrors(errors: readonly AjvError[], context: string): FieldError[] {
  return errors.map((v) => {
    const base = v.instancePath.replace(/^\//, '').replaceAll('/', '.');
    const params = v.params as Record<string, unknown>;
    if (v.keyword === 'additionalProperties') {
      const field = [base, String(params.additionalProperty)].filter(Boolean).join('.');
      return { path: `${context}.${field}`, message: 'is not a known field' };
    }
    if (v.keyword === 'required') {
      const field = [base, String(params.missingProperty)].filter(Boolean).join('.');
      return { path: `${context}.${field}`, message: 'is required' };
    }
    // A display-text format says which of its rules the value broke (the body Ajv is verbose: `data`).
    const textRule = v.keyword === 'format' ? TEXT_FORMATS[String(params.format)] : undefined;
    const data = (v as { data?: unknown }).data;
    const message = textRule && typeof data === 'string' ? textRule(data) : v.message;
    return { path: base ? `${context}.${base}` : context, message: message ?? 'is not valid' };
  });
}

/**
 * Whether the database refused text of the request that it cannot store: PostgreSQL's text holds
 * no NUL character (SQLSTATE 22021, also when drizzle wrapped the driver's error), where SQLite
 * would store it. The request's fault, answered as bad input rather than a 500.
 */
export function isUnstorableText(error: unknown): boolean {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.code === '22021') return true;
  }
  return false;
}

/** Turns any error thrown by Fastify or a handler into a `Problem` (or `undefined` for a 500). */
export function toProblem(error: unknown): Problem | undefined {
  if (error instanceof Problem) return error;
  if (isUnstorableText(error)) return badRequest('invalid_text', 'Text in the request must not contain the NUL character (U+0000).');
  const e = error as Partial<FastifyError> & { validation?: unknown };
  if (e && Array.isArray(e.validation)) {
    return validationFailed(validationErrors(e as FastifyError));
  }
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new Problem(413, 'payload_too_large', 'The request body is too large.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new Problem(415, 'unsupported_media_type', 'This endpoint accepts application/json bodies.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest('invalid_json', 'The request body is empty but Content-Type is application/json.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return badRequest('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return badRequest('bad_request', 'The request URL is malformed.');
    case 'FST_ERR_RATE_LIMIT':
      return undefined;
  }
  if (error instanceof SyntaxError && (error as { statusCode?: number }).statusCode === 400) {
    return badRequest('invalid_json', 'The request body is not valid JSON.');
  }
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = status === 413 ? 'payload_too_large' : status === 414 ? 'uri_too_long' : 'bad_request';
    return new Problem(status, code, 'The request cannot be processed.');
  }
  return undefined;
}

/** The error handler for JSON APIs. Registered once at the root; OAuth overrides it in its scope. */
export function problemErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const problem = toProblem(error);
  if (problem) return sendProblem(reply, problem);
  request.log.error({ err: error }, 'unhandled error');
  return sendProblem(reply, new Problem(500, 'internal_error', 'Something went wrong on our side.'));
}
