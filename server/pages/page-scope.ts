/**
 * What every hosted-page plugin needs: HTML form bodies, the sign-in rate limiter, and an error
 * handler that answers with the error page instead of problem+json (a person, not a program,
 * reads these responses).
 */
import type { FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import { toProblem } from '../http/problem.js';
import { registerRateLimit } from '../accounts/rate-limits.js';
import { renderError } from './render.js';

const TITLES: Record<number, string> = {
  400: 'Something is wrong with this request',
  403: 'Not allowed',
  404: 'Page not found',
  429: 'Too many attempts',
};

export async function preparePageScope(app: FastifyInstance): Promise<void> {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  await registerRateLimit(app);
  app.setErrorHandler((error, request, reply) => {
    const problem = toProblem(error);
    if (!problem) {
      request.log.error({ err: error }, 'unhandled error on a hosted page');
      return renderError(reply, 500, 'Something went wrong', 'Something went wrong on our side. Please try again.');
    }
    for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
    return renderError(reply, problem.status, TITLES[problem.status] ?? 'Something went wrong', problem.detail);
  });
}
