/** Wire schemas of the admin People API: people across applications (issue 25). */
import { Type, type Static } from 'typebox';
import { listQueryProperties } from '../http/pagination.js';
import { DisplayName, NullableTimestamp, Timestamp } from '../http/schemas.js';
import { SecondFactorSummarySchema } from '../accounts/second-factor/schemas.js';

export const PeopleQuerySchema = Type.Object(
  {
    ...listQueryProperties,
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the start of the e-mail address or username, or of any word of the name (case-insensitive)' })),
  },
  { additionalProperties: false },
);
export type PeopleQuery = Static<typeof PeopleQuerySchema>;

const PersonFields = {
  id: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], { description: 'disabled: cannot sign in anywhere (issue 33)' }),
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
    source: Type.Union([Type.Object({ id: Type.String(), dn: Type.String() }, { additionalProperties: false }), Type.Null()], {
      description: 'the directory source that keeps this person (their password and source fields stay there), or null',
    }),
    groups: Type.Array(Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false }), { description: 'directory groups, by id' }),
    secondFactor: SecondFactorSummarySchema,
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

/** `POST /api/admin/people` (issue 33): an invitation e-mail to choose a password, or the password itself. */
export const PersonCreateSchema = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, format: 'display-name' })),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: '^[a-z0-9][a-z0-9._-]{0,63}$; made from the e-mail when absent' })),
    groups: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 200, description: 'directory group ids' })),
    sendInvitation: Type.Optional(Type.Boolean({ description: 'true: e-mail a link to choose a password (valid for 7 days)' })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'set directly instead, under the password policy' })),
  },
  { additionalProperties: false },
);

/**
 * `PATCH /api/admin/people/:id`: the one schema of an administrator's change to a person (people/
 * service.ts `updatePerson`): status (issue 33), username, names and emailVerified (issue 32).
 */
export const PersonPatchSchema = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('disabled')], { description: 'disabled: cannot sign in anywhere; their sessions end (back-channel logout included)' })),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'case-insensitive; stored lower-case; `^[a-z0-9][a-z0-9._-]{0,63}$`' })),
    ...NameFields,
    emailVerified: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PersonPatchBody = Static<typeof PersonPatchSchema>;

export const PersonSessionsSchema = Type.Object(
  {
    sessions: Type.Array(
      Type.Object(
        { id: Type.String(), device: Type.String(), ip: Type.String(), createdAt: Timestamp, lastSeenAt: Timestamp, expiresAt: Timestamp, multiFactor: Type.Boolean() },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
