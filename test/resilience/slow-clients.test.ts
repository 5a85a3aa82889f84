/**
 * Slow and oversized clients against a real listening server (issue 9, hostile input): a
 * slowloris crowd dribbling headers, a body sent a byte at a time, 64 KiB of headers and
 * unparseable framing are cut off within the configured limits (server/http/server-limits.ts),
 * with a problem+json answer where one can still be written, while other clients keep getting
 * fast answers from `/healthz`, the JWKS and the token endpoint.
 *
 * The timeouts are shortened through their environment overrides so the file stays fast.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers/app.js';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
/** Node checks the timeouts every `HEADERS_TIMEOUT_MS / 4`; allow that, plus scheduling noise. */
const SLACK_MS = 1_000;
/** What a bystander's request may take while the attack runs. */
const FAST_MS = 200;

interface Raw {
  socket: Socket;
  openedAt: number;
  /** Resolves when the server closed the connection: what it answered and when. */
  closed: Promise<{ answer: string; afterMs: number }>;
}

const sockets: Socket[] = [];
afterEach(() => {
  while (sockets.length) sockets.pop()!.destroy();
});

async function listening(): Promise<{ t: TestApp; port: number }> {
  const t = await makeApp({
    config: {
      env: {
        GATEHOUSE_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        GATEHOUSE_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        // The bystander's failing token requests must not trip the failure limit.
        GATEHOUSE_TOKEN_FAILURE_LIMIT: '100000',
      },
    },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (!address || typeof address !== 'object') throw new Error('not listening');
  return { t, port: address.port };
}

async function open(port: number): Promise<Raw> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const openedAt = performance.now();
  const chunks: Buffer[] = [];
  socket.on('data', (chunk) => chunks.push(chunk));
  socket.on('error', () => {}); // a reset after the answer is part of being cut off
  const closed = new Promise<{ answer: string; afterMs: number }>((resolve) =>
    socket.once('close', () => resolve({ answer: Buffer.concat(chunks).toString('latin1'), afterMs: performance.now() - openedAt })),
  );
  return { socket, openedAt, closed };
}

/** Writes `text` a few bytes at a time every `everyMs`, until the socket closes. */
function dribble(raw: Raw, text: string, everyMs: number, bytes = 1): void {
  let at = 0;
  const timer = setInterval(() => {
    if (raw.socket.destroyed || !raw.socket.writable) return clearInterval(timer);
    raw.socket.write(text.slice(at, at + bytes));
    at = (at + bytes) % text.length;
  }, everyMs);
  raw.closed.then(() => clearInterval(timer));
}

/** Status line and parsed problem body of a raw HTTP answer. */
function parseAnswer(answer: string) {
  const [head, body] = answer.split('\r\n\r\n', 2) as [string, string | undefined];
  return { statusLine: head.split('\r\n')[0], head: head.toLowerCase(), body: body ? JSON.parse(body) : undefined };
}

function expectProblemAnswer(answer: string, status: number, code: string) {
  const parsed = parseAnswer(answer);
  expect(parsed.statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(parsed.head).toContain('content-type: application/problem+json; charset=utf-8');
  expect(parsed.head).toContain('connection: close');
  expect(parsed.body).toMatchObject({ type: `https://gatehouse.dev/problems/${code.replaceAll('_', '-')}`, status, code });
}

/**
 * Bystander traffic while `attack` runs: `/healthz`, the JWKS and a failing token request, one
 * after another over keep-alive; returns every latency.
 */
async function whileProbing(port: number, attack: Promise<unknown>): Promise<number[]> {
  const base = `http://127.0.0.1:${port}`;
  const latencies: number[] = [];
  let done = false;
  void attack.finally(() => (done = true));
  const probes: [string, RequestInit | undefined, number][] = [
    ['/healthz', undefined, 200],
    ['/api/auth/jwks', undefined, 200],
    ['/api/auth/oauth2/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&client_id=none&refresh_token=x' }, 401],
  ];
  while (!done) {
    for (const [path, init, status] of probes) {
      const started = performance.now();
      const res = await fetch(base + path, init);
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      expect(res.status, path).toBe(status);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await attack;
  return latencies;
}

describe('slow and oversized clients', () => {
  it('cuts off a slowloris crowd dribbling headers with 408 while others get fast answers', async () => {
    const { port } = await listening();
    const crowd = await Promise.all(Array.from({ length: 100 }, () => open(port)));
    for (const raw of crowd) {
      raw.socket.write('GET /healthz HTTP/1.1\r\nHost: gatehouse\r\n');
      dribble(raw, 'X-Slow: a\r\n', 100, 2);
    }
    const endings = Promise.all(crowd.map((raw) => raw.closed));
    const latencies = await whileProbing(port, endings);

    for (const { answer, afterMs } of await endings) {
      expectProblemAnswer(answer, 408, 'request_timeout');
      expect(afterMs).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
    }
    expect(latencies.length).toBeGreaterThan(10);
    expect(Math.max(...latencies)).toBeLessThan(FAST_MS);
  });

  it('cuts off connections that send nothing once the headers deadline passes', async () => {
    const { port } = await listening();
    const idle = await Promise.all(Array.from({ length: 20 }, () => open(port)));
    const endings = await Promise.all(idle.map((raw) => raw.closed));
    for (const { afterMs } of endings) expect(afterMs).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
  });

  it('cuts off a body sent a byte at a time with 408 at the request deadline', async () => {
    const { port } = await listening();
    const slow = await Promise.all(Array.from({ length: 20 }, () => open(port)));
    for (const raw of slow) {
      raw.socket.write(
        'POST /api/auth/sign-in/email HTTP/1.1\r\nHost: gatehouse\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{"email":"',
      );
      dribble(raw, 'a', 100);
    }
    const endings = Promise.all(slow.map((raw) => raw.closed));
    const latencies = await whileProbing(port, endings);
    for (const { answer, afterMs } of await endings) {
      expectProblemAnswer(answer, 408, 'request_timeout');
      expect(afterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
      expect(afterMs).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
    }
    expect(Math.max(...latencies)).toBeLessThan(FAST_MS);
  });

  it('answers 64 KiB of headers with 431 at once and closes the connection', async () => {
    const { port } = await listening();
    const shapes = [
      `X-Big: ${'a'.repeat(64 * 1024)}\r\n`,
      Array.from({ length: 2_000 }, (_, i) => `X-Many-${i}: ${'b'.repeat(24)}\r\n`).join(''),
      `Cookie: ${'gatehouse_session=c; '.repeat(3_200)}\r\n`,
    ];
    for (const headers of shapes) {
      const raw = await open(port);
      raw.socket.write(`GET /healthz HTTP/1.1\r\nHost: gatehouse\r\n${headers}\r\n`);
      const { answer, afterMs } = await raw.closed;
      expectProblemAnswer(answer, 431, 'headers_too_large');
      expect(afterMs).toBeLessThan(500);
    }
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
  });

  it('answers framing Node refuses (smuggling, duplicate lengths, junk) with a 400 problem and closes', async () => {
    const { port } = await listening();
    const requests = [
      'POST /api/auth/oauth2/token HTTP/1.1\r\nHost: g\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde',
      'POST /api/auth/oauth2/token HTTP/1.1\r\nHost: g\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: g\r\nX-Bad\u0000: 1\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: g\r\n Folded: continuation\r\n\r\n',
      'NOT-A-METHOD / HTTP/1.1\r\n\r\n',
      '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003',
    ];
    for (const request of requests) {
      const raw = await open(port);
      raw.socket.write(Buffer.from(request, 'latin1'));
      const { answer, afterMs } = await raw.closed;
      expectProblemAnswer(answer, 400, 'bad_request');
      expect(afterMs).toBeLessThan(500);
    }
  });
});
