/** Wire schemas of the admin People API: people across applications (issue 25). */
import { Type, type Static } from 'typebox';
import { listQueryProperties } from '../http/pagination.js';
import { DisplayName, NullableTimestamp, Timestamp } from '../http/schemas.js';

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
  username: Type.String({ description: '`preferred_username`: unique, lower-case' }),
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
    givenName: Type.Union([Type.String(), Type.Null()]),
    familyName: Type.Union([Type.String(), Type.Null()]),
    updatedAt: Timestamp,
    hasPassword: Type.Boolean(),
    groups: Type.Array(Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false }), { description: 'directory groups, by id' }),
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

/** A person's names as anyone edits them: display text, blank or null clears (people/service.ts). */
export const NameFields = {
  name: Type.Optional(Type.Union([DisplayName({ maxLength: 200 }), Type.Null()])),
  givenName: Type.Optional(Type.Union([DisplayName({ maxLength: 100 }), Type.Null()])),
  familyName: Type.Optional(Type.Union([DisplayName({ maxLength: 100 }), Type.Null()])),
};

/**
 * `PATCH /api/admin/people/:id`: the one schema of an administrator's change to a person (issue 33
 * adds `status` here).
 */
export const PersonPatchSchema = Type.Object(
  {
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'case-insensitive; stored lower-case; `^[a-z0-9][a-z0-9._-]{0,63}$`' })),
    ...NameFields,
    emailVerified: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PersonPatchBody = Static<typeof PersonPatchSchema>;
