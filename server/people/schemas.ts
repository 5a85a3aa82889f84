/** Wire schemas of the admin People API: people across applications (issue 25). */
import { Type, type Static } from 'typebox';
import { listQueryProperties } from '../http/pagination.js';
import { NullableTimestamp, Timestamp } from '../http/schemas.js';

export const PeopleQuerySchema = Type.Object(
  {
    ...listQueryProperties,
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'e-mail address prefix (case-insensitive)' })),
  },
  { additionalProperties: false },
);
export type PeopleQuery = Static<typeof PeopleQuerySchema>;

const PersonFields = {
  id: Type.String(),
  email: Type.String(),
  emailVerified: Type.Boolean(),
  name: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
};

export const PersonSummarySchema = Type.Object(
  { ...PersonFields, applications: Type.Integer({ description: 'how many applications the person is a member of' }) },
  { additionalProperties: false },
);

export const PeopleListSchema = Type.Object(
  { people: Type.Array(PersonSummarySchema), nextCursor: Type.Union([Type.String(), Type.Null()]) },
  { additionalProperties: false },
);

export const PersonSchema = Type.Object(
  {
    ...PersonFields,
    hasPassword: Type.Boolean(),
    memberships: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: 'membership (application user) id' }),
          applicationId: Type.String(),
          applicationName: Type.String(),
          status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
          role: Type.Union([Type.Literal('member'), Type.Literal('admin')]),
          joinedAt: Timestamp,
          lastActiveAt: NullableTimestamp,
        },
        { additionalProperties: false },
      ),
    ),
    linkedAccounts: Type.Array(
      Type.Object({ provider: Type.String(), email: Type.String(), linkedAt: Timestamp }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

export const PersonParams = Type.Object({ id: Type.String({ maxLength: 200 }) }, { additionalProperties: false });
