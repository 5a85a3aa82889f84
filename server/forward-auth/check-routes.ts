/**
 * `GET /api/auth/forward` (Caddy `forward_auth`, Traefik `forwardAuth`) and
 * `GET /api/auth/forward/auth-request` (nginx `auth_request`, which understands only 2xx, 401 and
 * 403: ngx_http_auth_request_module, nginx 1.22) — spec forward-auth.md, "The check"; the
 * decision is check.ts's.
 *
 * Every request through a proxy costs one check, so a GET of the exact path is answered before
 * Fastify (http/early-answers.ts), by the same decision the routes make; the one answer that is a
 * hosted page (a browser refused at /forward) is handed to the Fastify route, which renders it.
 * Each answer is counted once, by whoever sends it (`gatehouse_forward_auth_checks_total{result}`).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { JSON_SECURITY_HEADERS } from '../http/security-headers.js';
import { AUTH_REQUEST_PATH, FORWARD_PATH, type CheckAnswer, type Checked, type Endpoint, type ForwardAuthResult, type ForwardCheck } from './check.js';
import { sendRefusedPage } from './pages.js';

function send(reply: FastifyReply, answer: Exclude<CheckAnswer, { page: 'refused' }>): FastifyReply {
  reply.status(answer.status).headers(answer.headers);
  return answer.body ? reply.send(answer.body) : reply.send();
}

export const checkRoutes: FastifyPluginAsync<{ check: ForwardCheck; count: (result: ForwardAuthResult) => void }> = async (app, { check, count }) => {
  const { config } = app.ctx;
  for (const [path, endpoint] of [[FORWARD_PATH, 'forward'], [AUTH_REQUEST_PATH, 'auth-request']] as const) {
    // Synchronous when the check is answered from memory (check.ts `decide`): no promise per request.
    const early = ({ answer, result }: Checked) => {
      if ('page' in answer) return undefined;
      count(result);
      return answer;
    };
    app.earlyAnswers.addGet(path, JSON_SECURITY_HEADERS, (call) => {
      try {
        const checked = check.decide(endpoint, call.peer ?? '', call.headers);
        // On a failure the route answers the same request and reports it as any route does.
        return checked instanceof Promise ? checked.then(early, () => undefined) : early(checked);
      } catch {
        return undefined;
      }
    });
    app.get(path, { schema: { hide: true } }, async (request: FastifyRequest, reply) => {
      const { answer, result } = await check.decide(endpoint as Endpoint, request.socket.remoteAddress ?? '', request.headers);
      count(result);
      if ('page' in answer) return sendRefusedPage(reply, answer.app, answer, answer.startPath, new URL(config.issuer).origin);
      return send(reply, answer);
    });
  }
};
