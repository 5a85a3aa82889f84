/**
 * Problem titles (RFC 9457 `title`): every status the server answers with has its reason phrase,
 * never the "Error" fallback (410 for used or expired e-mail links, 502 when a sign-in provider
 * fails, 408 and 431 from the HTTP server's limits).
 */
import { describe, expect, it } from 'vitest';
import { Problem, problemBody } from '../../server/http/problem.js';

const titleOf = (status: number) => problemBody(new Problem(status, 'some_code', 'Some detail.')).title;

describe('problem titles', () => {
  it('names every status the project uses', () => {
    expect(
      Object.fromEntries([400, 401, 403, 404, 405, 408, 409, 410, 413, 414, 415, 429, 431, 500, 502, 503].map((s) => [s, titleOf(s)])),
    ).toEqual({
      400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
      408: 'Request Timeout', 409: 'Conflict', 410: 'Gone', 413: 'Payload Too Large', 414: 'URI Too Long',
      415: 'Unsupported Media Type', 429: 'Too Many Requests', 431: 'Request Header Fields Too Large',
      500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable',
    });
  });

  it('falls back to "Error" only for a status nobody answers with', () => {
    expect(titleOf(418)).toBe('Error');
  });
});
