/**
 * One delivery attempt over HTTP. The stored payload is POSTed byte for byte (the signature
 * covers those bytes). Redirects are failures, never followed: a receiver that moved must be
 * re-configured by an administrator, and following them would let a receiver point Gatehouse at
 * any other address. Any 2xx is success; everything else, a timeout or a network error is a
 * failure described in `error`.
 */
export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

const USER_AGENT = 'Gatehouse-Webhooks/1';

function describeNetworkError(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timed out after ${timeoutMs} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? (error as Error).message ?? 'unknown error';
  return `request failed: ${detail}`.slice(0, 500);
}

const MAX_DRAIN_BYTES = 64 * 1024;

/**
 * The answer's body is not used, but reading a small one lets the connection be reused; a large
 * or endless one is cut off (bounded by the same timeout signal).
 */
async function drain(response: Response): Promise<void> {
  if (!response.body) return;
  const reader = response.body.getReader();
  let read = 0;
  try {
    while (read <= MAX_DRAIN_BYTES) {
      const chunk = await reader.read();
      if (chunk.done) return;
      read += chunk.value.byteLength;
    }
    await reader.cancel();
  } catch {
    // A body that fails mid-way does not change the status already received.
  }
}

export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  stop?: AbortSignal,
): Promise<AttemptResult> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
      body,
      redirect: 'manual',
      signal,
    });
    await drain(response);
    const statusCode = response.status;
    if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode, error: null };
    if (statusCode >= 300 && statusCode < 400) {
      return { ok: false, statusCode, error: `redirect (HTTP ${statusCode}) not followed` };
    }
    return { ok: false, statusCode, error: `HTTP ${statusCode}` };
  } catch (error) {
    if (stop?.aborted && !timeout.aborted) return { ok: false, statusCode: null, error: 'stopped' };
    return { ok: false, statusCode: null, error: describeNetworkError(error, timeout.aborted, timeoutMs) };
  }
}
