/**
 * The trust page on the plain-http listener (`GATEHOUSE_HTTP_REDIRECT_PORT`, started by main.ts),
 * which otherwise only redirects to https: a device that does not trust the CA yet cannot open
 * the HTTPS port to fetch it. Same answers as on HTTPS (answer.ts); the page says to compare the
 * fingerprint, since plain http can be altered on the way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config.js';
import { isTrustPath, trustAnswer } from './answer.js';

const NOT_FOUND_HEADERS = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };

/** Answers a trust path (true), or leaves the request to the redirect (false). */
export function answerPlainHttpTrust(config: Config, request: IncomingMessage, response: ServerResponse): boolean {
  const path = (request.url ?? '/').split('?')[0]!;
  if (!isTrustPath(path)) return false;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { ...NOT_FOUND_HEADERS, allow: 'GET, HEAD' }).end('Method not allowed.\n');
    return true;
  }
  const answer = trustAnswer(config, path, 'plain-http');
  if (!answer) {
    response.writeHead(404, NOT_FOUND_HEADERS).end('Not found.\n');
    return true;
  }
  response
    .writeHead(200, { ...answer.headers, 'referrer-policy': 'no-referrer', 'content-length': String(Buffer.byteLength(answer.body)) })
    .end(request.method === 'HEAD' ? undefined : answer.body);
  return true;
}
