/** Assertions for RFC 9457 problem answers (DESIGN §4.1). */
import { expect } from 'vitest';

interface Reply {
  statusCode: number;
  headers: Record<string, unknown>;
  json(): any;
}

/** Asserts status, problem+json content type, `code`, and the fixed body shape; returns the body. */
export function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.statusCode, body: res.json() }).toMatchObject({ status, body: { code } });
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = res.json();
  expect(body).toMatchObject({ type: `https://gatehouse.dev/problems/${code.replaceAll('_', '-')}`, status, code });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  return body as { type: string; title: string; status: number; detail: string; code: string; errors?: { path: string; message: string }[] };
}

/** Asserts a 400 `validation_failed` whose `errors` name exactly these paths (in any order). */
export function expectValidation(res: Reply, paths: string[]) {
  const body = expectProblem(res, 400, 'validation_failed');
  const named = [...new Set((body.errors ?? []).map((e) => e.path))].sort();
  expect(named).toEqual([...new Set(paths)].sort());
  return body;
}
