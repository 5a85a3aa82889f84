/**
 * Bodyless writes (sign-out, DELETE, "sign out everywhere") still send `Content-Type:
 * application/json` to pass the JSON CSRF rule; in the caller's scope an empty body with that
 * type is accepted as no body instead of a 400 `invalid_json`.
 */
import type { FastifyInstance } from 'fastify';

export function acceptEmptyJsonBody(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    return json(request, body as string, done);
  });
}
