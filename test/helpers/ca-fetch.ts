/**
 * A `fetch` that trusts exactly one CA (and nothing from the system store), for relying-party
 * libraries' `customFetch` hooks and plain test requests against the LAN HTTPS listener.
 */
import { request } from 'node:https';
import { headerRecord } from './header-record.js';

export type CaFetch = (url: string | URL, init?: { method?: string; headers?: HeadersInit; body?: unknown; redirect?: string }) => Promise<Response>;

export function caFetch(caPem: string): CaFetch {
  return (url, init = {}) =>
    new Promise((resolve, reject) => {
      const headers = headerRecord(new Headers(init.headers ?? {}));
      const body = init.body === undefined || init.body === null ? undefined : String(init.body);
      const req = request(url, { method: init.method ?? 'GET', headers, ca: caPem }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(name, v);
          }
          const status = res.statusCode ?? 500;
          const payload = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(payload, { status, headers: responseHeaders }));
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
}
