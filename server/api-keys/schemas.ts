/** Wire schemas of API keys, DESIGN §4.7. */
import { Type, type Static } from 'typebox';
import { listQueryProperties } from '../http/pagination.js';
import { DisplayName, NullableTimestamp, Timestamp } from '../http/schemas.js';

export const API_KEY_SCOPES = [
  'application:read',
  'application:write',
  'users:read',
  'users:write',
  'invitations:read',
  'invitations:write',
  'webhooks:read',
  'webhooks:write',
] as const;

export const ApiKeyCreateSchema = Type.Object(
  {
    name: DisplayName({ minLength: 1, maxLength: 200 }),
    // Checked against API_KEY_SCOPES in the service, so a 400 names each unknown scope plainly.
    scopes: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20 }),
    expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type ApiKeyCreate = Static<typeof ApiKeyCreateSchema>;

export const ApiKeyRecordSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  prefix: Type.String(),
  createdAt: Timestamp,
  expiresAt: NullableTimestamp,
  lastUsedAt: NullableTimestamp,
});

export const ApiKeyCreatedSchema = Type.Object({ ...ApiKeyRecordSchema.properties, key: Type.String() });

export const ApiKeyListSchema = Type.Object({
  apiKeys: Type.Array(ApiKeyRecordSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export const ApiKeyListQuerySchema = Type.Object(listQueryProperties, { additionalProperties: false });

export const ApiKeyParams = Type.Object({ id: Type.String({ maxLength: 200 }), kid: Type.String({ maxLength: 200 }) });
