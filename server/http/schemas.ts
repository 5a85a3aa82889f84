/** Schemas shared across feature routes (problem details, ids, timestamps, display text). */
import { Type, type TStringOptions } from 'typebox';
import { displayTextProblem } from '../util/display-text.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({
      path: Type.String(),
      message: Type.String(),
      line: Type.Optional(Type.Integer({ minimum: 1, description: 'the line of a submitted file (a configuration file) the problem is on' })),
    }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);

/** Reference to the shared problem schema for route `response` maps. */
export const problemRef = Type.Ref('Problem');

/** ISO 8601 UTC timestamp as written on the wire. */
export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

/** Application and SSO-group ids (DESIGN §4.3). */
export const SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{1,62}$';
export const Slug = Type.String({ pattern: SLUG_PATTERN, minLength: 2, maxLength: 63 });
/**
 * The control panel's built-in OAuth client (administrators/panel-client.ts): outside SLUG_PATTERN,
 * so no application created through the admin API can take its id.
 */
export const PANEL_CLIENT_ID = '_gatehouse-panel';
/** Whether an id is the panel's built-in client, which no admin route, list or membership view shows. */
export const isPanelClient = (id: string | undefined): boolean => id === PANEL_CLIENT_ID;
/** An application named by a sign-in (its id, or the panel's built-in client). */
export const ApplicationRef = Type.String({ pattern: `^(${PANEL_CLIENT_ID}|[a-z0-9][a-z0-9_-]{1,62})$`, minLength: 2, maxLength: 63 });

export const iso = (date: Date | null | undefined): string | null => (date ? date.toISOString() : null);

/** Standard error responses for admin routes, for the OpenAPI document. */
export const adminErrors = {
  400: problemRef,
  401: problemRef,
  403: problemRef,
  404: problemRef,
  409: problemRef,
  413: problemRef,
  415: problemRef,
};

/** Query schema for routes that take no query parameters: any given one is an unknown field (400). */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** `:id` path parameter of application- and group-scoped admin routes. */
export const IdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

/** OpenAPI security requirement of every admin route. */
export const adminSecurity = [{ adminToken: [] }];

/**
 * Names and free text shown to other people (util/display-text.ts): `display-name` is one line,
 * `display-text` may break lines. Registered as Ajv formats (app.ts), so the rule sits in the
 * schema at the edge and shows in the OpenAPI document; a refusal names the rule it broke.
 */
export const TEXT_FORMATS: Record<string, (text: string) => string | undefined> = {
  'display-name': (text) => displayTextProblem(text),
  'display-text': (text) => displayTextProblem(text, { multiline: true }),
};
export const DisplayName = (options: TStringOptions = {}) => Type.String({ ...options, format: 'display-name' });
export const DisplayText = (options: TStringOptions = {}) => Type.String({ ...options, format: 'display-text' });
