/**
 * One delivery attempt over HTTP. The stored payload is POSTed byte for byte (the signature
 * covers those bytes). Redirects are failures, never followed: a receiver that moved must be
 * re-configured by an administrator, and following them would let a receiver point Gatehouse at
 * any other address. Link-local, unspecified and multicast targets, loopback (unless allowed) and
 * this server's own sockets are refused, also when a host name resolves to one (target-address.ts). Any 2xx is success; everything else, a timeout or a network error is a
 * failure described in `error`.
 *
 * node:http(s) with keep-alive agents rather than `fetch`: it costs a fraction of the CPU per
 * request, which is what bounds fan-out throughput; `AbortSignal` gives the timeout and stop.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { guardedLookup, literalTargetProblem, type TargetPolicy } from './target-address.js';

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

const USER_AGENT = 'Gatehouse-Webhooks/1';
/** Bytes of an answer's body read (and ignored) so the connection can be reused. */
const MAX_DRAIN_BYTES = 64 * 1024;

const agents = {
  'http:': new HttpAgent({ keepAlive: true, keepAliveMsecs: 10_000 }),
  'https:': new HttpsAgent({ keepAlive: true, keepAliveMsecs: 10_000 }),
};

function statusResult(statusCode: number): AttemptResult {
  if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode, error: null };
  if (statusCode >= 300 && statusCode < 400) return { ok: false, statusCode, error: `redirect (HTTP ${statusCode}) not followed` };
  return { ok: false, statusCode, error: `HTTP ${statusCode}` };
}

export function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  policy: TargetPolicy,
  stop?: AbortSignal,
): Promise<AttemptResult> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const failure = (error: unknown) => {
      if (stop?.aborted && !timeout.aborted) return finish({ ok: false, statusCode: null, error: 'stopped' });
      if (timeout.aborted) return finish({ ok: false, statusCode: null, error: `timed out after ${timeoutMs} ms` });
      const e = error as NodeJS.ErrnoException;
      // Our own refusals (target-address.ts) say why; a network error is its code (ECONNREFUSED, …).
      const why = e.code === 'EFORBIDDENADDRESS' ? e.message : (e.code ?? e.message ?? 'unknown error');
      finish({ ok: false, statusCode: null, error: `request failed: ${why}`.slice(0, 500) });
    };
    let target: URL;
    let port: number;
    try {
      target = new URL(url);
      if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error('unsupported URL scheme');
      port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
      // Node connects to an IP literal without a lookup, so literals are judged here.
      const problem = literalTargetProblem(target.hostname, port, policy);
      if (problem) throw new Error(problem);
    } catch (error) {
      return failure(error);
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      target,
      {
        method: 'POST',
        agent: agents[target.protocol as 'http:' | 'https:'],
        lookup: guardedLookup(policy, port),
        signal,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': USER_AGENT,
          ...headers,
        },
      },
      (res: IncomingMessage) => {
        // The status decides; the body is drained (bounded) only so the socket can be reused.
        const result = statusResult(res.statusCode ?? 0);
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_DRAIN_BYTES) res.destroy();
        });
        res.on('end', () => finish(result));
        res.on('close', () => finish(result));
        res.on('error', () => finish(result));
      },
    );
    req.on('error', failure);
    req.end(body);
  });
}
