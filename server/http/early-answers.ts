/**
 * Answers given by the Node server before Fastify sees the request.
 *
 * - Documents (issue 9: JWKS and discovery at ≥ 15,000 requests/s on two cores): every relying
 *   party and verifier fetches them; they take no input, read no cookie and are the same for every
 *   caller, so routing, hooks and the reply object (about 40 % of their cost through Fastify) buy
 *   nothing there. `GET`/`HEAD` of the exact path.
 * - Calls (issue 27: the token endpoint close to the cost of its signature, userinfo ≤ 0.1 ms):
 *   a `GET` of the exact path, or a form `POST` (`application/x-www-form-urlencoded` with a
 *   Content-Length within the form limit), answered by the same function the Fastify route calls,
 *   so both send the same status, headers and body. Fastify's routing, hooks, content-type parser
 *   and reply were about 12 % of a refresh grant's event-loop CPU; this path has none of them.
 *   The form is parsed by the parser @fastify/formbody uses (fast-querystring).
 *
 * - Forward-auth checks (issue 34: every request through a proxy costs one): a `GET` of the exact
 *   path; an answer may name its own content type, or hand the request to Fastify (undefined: the
 *   route renders a hosted page instead).
 *
 * Only the exact registered path and method are answered here, with the route's own headers plus
 * the ones the global hooks add (security headers, CORS). Anything else — a query string, another
 * method, another content type, an oversized or chunked body, a preflight — goes to Fastify, whose
 * route for the same path answers the same (the tests compare both, and `inject` only ever reaches
 * Fastify's).
 */
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { FastifyServerFactory } from 'fastify';
import { parse as parseForm } from 'fast-querystring';
import type { serverLimits } from './server-limits.js';
import { withClientAddress } from './client-address.js';

/** A computed answer: what the early path and a Fastify route both send (as JSON). */
export interface JsonAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What an early call's answer may read of the request (a FastifyRequest has the same fields). */
export interface EarlyCall {
  /** The client's address (a trusted proxy's X-Forwarded-For: http/client-address.ts). */
  ip: string;
  /** The connection's own peer (the proxy itself, behind one): whom forward auth trusts. */
  peer?: string;
  headers: IncomingHttpHeaders;
  /** The parsed form of a POST; undefined for a GET. */
  body: unknown;
}

/**
 * Answers one call; must not throw or reject (failures are answers too). Sync or async: a
 * synchronous answer is written in the same tick. A GET answer may be undefined: Fastify's route
 * answers instead. The answer's `content-type` header, when it has one, replaces JSON's; an empty body has none.
 */
export type CallAnswer = (call: EarlyCall) => JsonAnswer | undefined | Promise<JsonAnswer | undefined>;

export const JSON_TYPE = 'application/json; charset=utf-8';

const FORM_TYPE = /^application\/x-www-form-urlencoded[ \t]*(;|$)/i;

interface EarlyRoute {
  /** Headers every answer of this path carries (security headers, CORS) beside the answer's own. */
  headers: Record<string, string>;
  answer: CallAnswer;
}

interface FormRoute extends EarlyRoute {
  /** Bodies larger than this go to Fastify (which refuses them in the route's own shape). */
  limit: number;
}

interface EarlyAnswer {
  headers: Record<string, string>;
  body: () => string;
  /** The last body and its bytes, so an unchanged document is not re-encoded per request. */
  lastBody: string;
  lastBytes: Buffer;
}

/** Told about every early answer (metrics' request-duration histogram): its path, status and seconds taken. */
export type AnswerObserver = (route: string, status: number, seconds: number) => void;

export class EarlyAnswers {
  private readonly answers = new Map<string, EarlyAnswer>();
  private readonly gets = new Map<string, EarlyRoute>();
  private readonly forms = new Map<string, FormRoute>();

  /**
   * `serverHeaders`: what every answer of this server carries on top of a route's own (HSTS under
   * TLS); `observe`: told when each answer has been written.
   */
  constructor(
    private readonly serverHeaders: Record<string, string> = {},
    private readonly observe: AnswerObserver = () => {},
    /** The client's address (GATEHOUSE_TRUST_PROXY's rule, http/client-address.ts). */
    private readonly addressOf: (request: IncomingMessage) => string = (request) => request.socket.remoteAddress ?? '',
  ) {}

  /** Serve `GET`/`HEAD` of exactly `path` with status 200, these headers and `body()`'s JSON. */
  add(path: string, headers: Record<string, string>, body: () => string): void {
    this.answers.set(path, { headers, body, lastBody: '', lastBytes: Buffer.alloc(0) });
  }

  /** Answer `GET` of exactly `path` with `answer` (HEAD and everything else go to Fastify). */
  addGet(path: string, headers: Record<string, string>, answer: CallAnswer): void {
    this.gets.set(path, { headers, answer });
  }

  /** Answer a form `POST` of exactly `path`, up to `limit` bytes, with `answer`. */
  addFormPost(path: string, headers: Record<string, string>, limit: number, answer: CallAnswer): void {
    this.forms.set(path, { headers, answer, limit });
  }

  /**
   * Answers the request if it is one of ours; false hands it to Fastify. `fastify` hands it over
   * later, when an answer turns out to be the route's to give.
   */
  answer(request: IncomingMessage, response: ServerResponse, fastify?: () => void): boolean {
    const method = request.method;
    const started = performance.now();
    if (method === 'POST') return this.form(request, response, started);
    if (method !== 'GET' && method !== 'HEAD') return false;
    const path = request.url!;
    const call = method === 'GET' ? this.gets.get(path) : undefined;
    if (call) {
      const ip = this.addressOf(request);
      const peer = request.socket.remoteAddress ?? '';
      this.send(response, path, started, call, withClientAddress(ip, () => call.answer({ ip, peer, headers: request.headers, body: undefined })), fastify);
      return true;
    }
    const answer = this.answers.get(path);
    if (!answer) return false;
    let body: string;
    try {
      body = answer.body();
    } catch {
      // Fastify's route reads the same body and turns the failure into the documented error.
      return false;
    }
    if (body !== answer.lastBody) {
      answer.lastBody = body;
      answer.lastBytes = Buffer.from(body);
    }
    response.writeHead(200, { ...answer.headers, ...this.serverHeaders, 'content-length': answer.lastBytes.length });
    response.end(method === 'HEAD' ? undefined : answer.lastBytes);
    this.observe(path, 200, (performance.now() - started) / 1000);
    return true;
  }

  /** A form POST of one of ours with a declared length within its limit; false hands it to Fastify. */
  private form(request: IncomingMessage, response: ServerResponse, started: number): boolean {
    const path = request.url!;
    const route = this.forms.get(path);
    if (!route) return false;
    const { headers } = request;
    const length = Number(headers['content-length']);
    if (!FORM_TYPE.test(headers['content-type'] ?? '') || headers['transfer-encoding'] !== undefined || !(length <= route.limit)) return false;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('error', () => response.destroy());
    request.on('end', () => {
      const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString();
      const ip = this.addressOf(request);
      this.send(response, path, started, route, withClientAddress(ip, () => route.answer({ ip, headers, body: parseForm(text) })));
    });
    return true;
  }

  private send(
    response: ServerResponse,
    path: string,
    started: number,
    route: EarlyRoute,
    answer: JsonAnswer | undefined | Promise<JsonAnswer | undefined>,
    fastify?: () => void,
  ): void {
    const write = (given: JsonAnswer | undefined) => {
      if (!given) return fastify ? fastify() : response.destroy();
      const { status, headers, body } = given;
      const bytes = Buffer.from(body);
      // An empty answer (a forward-auth 200 or 302) names no type, as Fastify's reply.send() does.
      const type = bytes.length ? { 'content-type': JSON_TYPE } : undefined;
      response.writeHead(status, { ...type, ...headers, ...route.headers, ...this.serverHeaders, 'content-length': bytes.length });
      response.end(bytes);
      this.observe(path, status, (performance.now() - started) / 1000);
    };
    // An answer never rejects (failures are answers); should one, the connection is closed rather than left hanging.
    if (answer instanceof Promise) answer.then(write, () => response.destroy());
    else write(answer);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    earlyAnswers: EarlyAnswers;
  }
}

/**
 * The Node server Fastify runs on: HTTP, or HTTPS with `tls`, with the connection limits of
 * `serverLimits` (Fastify applies its timeout options only to servers it creates itself, so they
 * are set here), asking `early` before handing a request to Fastify.
 */
export function nodeServerFactory(
  limits: ReturnType<typeof serverLimits>,
  tls: { key: string; cert: string } | undefined,
  early: EarlyAnswers,
): FastifyServerFactory {
  return (handler) => {
    const listener = (request: IncomingMessage, response: ServerResponse) => {
      if (!early.answer(request, response, () => handler(request, response))) handler(request, response);
    };
    // An https.Server is what Fastify itself would create here; its request type is http's.
    const server = (tls ? createHttpsServer({ ...limits.node, ...tls }, listener) : createHttpServer(limits.node, listener)) as Server;
    server.keepAliveTimeout = limits.fastify.keepAliveTimeout;
    server.requestTimeout = limits.fastify.requestTimeout;
    server.setTimeout(limits.fastify.connectionTimeout);
    return server;
  };
}
