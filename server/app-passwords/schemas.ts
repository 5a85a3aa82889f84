/** Wire schemas of app passwords under /api/me (spec ldap.md, "People bind with app passwords"). */
import { Type, type Static } from 'typebox';
import { DisplayName, Timestamp } from '../http/schemas.js';

export const AppPasswordCreateBody = Type.Object(
  {
    applicationId: Type.String({ minLength: 1, maxLength: 200, description: 'The application the password signs in to (you must be an active member, and it must have LDAP on or take HTTP Basic on its protected hosts)' }),
    name: DisplayName({ minLength: 1, maxLength: 100, description: 'What it is for, e.g. "Jellyfin on the TV"' }),
  },
  { additionalProperties: false },
);
export type AppPasswordCreateInput = Static<typeof AppPasswordCreateBody>;

export const AppPasswordSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    applicationId: Type.String(),
    applicationName: Type.String(),
    createdAt: Timestamp,
    lastUsedAt: Type.Union([Timestamp, Type.Null()], { description: 'When it last signed in (to the minute); null: never' }),
  },
  { additionalProperties: false },
);

export const AppPasswordCreatedSchema = Type.Object(
  {
    ...AppPasswordSchema.properties,
    password: Type.String({ description: 'The app password, shown only in this answer' }),
  },
  { additionalProperties: false },
);

export const AppPasswordsResponse = Type.Object({ appPasswords: Type.Array(AppPasswordSchema) }, { additionalProperties: false });
export const AppPasswordParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
