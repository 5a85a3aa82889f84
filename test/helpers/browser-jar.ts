/**
 * A browserless browser for redirect-driven flows: `fetch` with `redirect: 'manual'` and a cookie
 * jar keyed by host name (like browsers, cookies ignore the port), following redirects hop by hop
 * until an answer that is not a redirect or a host the test does not serve.
 */
import { request as httpRequest } from 'node:http';
import { expect } from 'vitest';

export interface Hop {
  url: string;
  status: number;
  location: string | undefined;
}

export class Browser {
  private jar = new Map<string, Map<string, string>>();

  /**
   * Hosts this browser actually visits; a redirect anywhere else stops `follow` (e.g. the app's callback).
   * `navigate`: send what a browser's page navigation sends (Accept text/html, Sec-Fetch-Mode
   * navigate, over node:http, as fetch always says `cors`): some relying parties (mod_auth_openidc)
   * answer anything else as an API call, with 401 instead of a redirect to sign in.
   */
  constructor(private readonly servedHosts: string[], private readonly options: { navigate?: boolean } = {}) {}

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }

  setCookie(host: string, name: string, value: string): void {
    if (!this.jar.has(host)) this.jar.set(host, new Map());
    this.jar.get(host)!.set(name, value);
  }

  /** Drops every cookie of a host: a fresh browser as far as that server can tell. */
  forget(host: string): void {
    this.jar.delete(host);
  }

  private store(host: string, res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attributes.some((a) => {
        const [k, v] = a.trim().split('=');
        if (k!.toLowerCase() === 'max-age') return Number(v) <= 0;
        if (k!.toLowerCase() === 'expires') return new Date(v!).getTime() <= Date.now();
        return false;
      });
      if (expired || value === '') this.jar.get(host)?.delete(name);
      else this.setCookie(host, name, value);
    }
  }

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const target = new URL(url);
    const cookies = [...(this.jar.get(target.hostname) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
    const headers: Record<string, string> = {};
    if (cookies) headers.cookie = cookies;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const method = init.method ?? (body ? 'POST' : 'GET');
    const res = this.options.navigate && target.protocol === 'http:'
      ? await navigation(target, method, { ...headers, accept: 'text/html,application/xhtml+xml', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }, body)
      : await fetch(target, { method, headers, body, redirect: 'manual' });
    this.store(target.hostname, res);
    return res;
  }

  /** Requests `url` and follows redirects; returns the last answer, its URL and every hop. */
  async follow(url: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const hops: Hop[] = [];
    let current = url;
    let res = await this.request(current, init);
    for (;;) {
      const location = res.headers.get('location') ?? undefined;
      hops.push({ url: current, status: res.status, location });
      if (res.status < 300 || res.status >= 400 || !location) break;
      const next = new URL(location, current);
      if (!this.servedHosts.includes(next.host)) break;
      await res.arrayBuffer();
      current = next.href;
      res = await this.request(current);
      if (hops.length > 15) throw new Error('too many redirects');
    }
    return { res, url: current, hops, location: res.headers.get('location') ?? undefined };
  }
}

/** One plain-http request as a browser navigation, answered as a fetch Response (redirects not followed). */
function navigation(url: URL, method: string, headers: Record<string, string>, body: string | undefined): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const v of [value ?? []].flat()) answer.append(name, v);
        }
        const status = res.statusCode ?? 500;
        resolve(new Response([204, 304].includes(status) ? null : Buffer.concat(chunks), { status, headers: answer }));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The value of a hidden or text input named `name` in an HTML page. */
export function inputValue(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no input ${name} in page`);
  return match[1]!.replaceAll('&amp;', '&');
}

/** The (unescaped) href of the first link whose text contains `text`. */
export function linkHref(html: string, text: string): string {
  const match = new RegExp(`href="([^"]*)"[^>]*>[^<]*${text}`).exec(html);
  if (!match) throw new Error(`no link "${text}" in page`);
  return match[1]!.replaceAll('&amp;', '&').replaceAll('&#39;', "'").replaceAll('&quot;', '"');
}

/** Asserts a hosted HTML page (fetch `Response` or inject answer) with this status showing `text`. */
export async function expectPage(res: Response | { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, text: string) {
  const seen =
    res instanceof Response
      ? { status: res.status, type: res.headers.get('content-type'), body: await res.text() }
      : { status: res.statusCode, type: res.headers['content-type'], body: res.body };
  expect(seen.status).toBe(status);
  expect(seen.type).toBe('text/html; charset=utf-8');
  expect(seen.body).toContain(text);
}
