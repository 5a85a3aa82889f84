/** Wire schemas of the admin Groups API (spec claims-and-groups.md, "Groups"). */
import { Type, type Static } from 'typebox';
import { listQueryProperties } from '../http/pagination.js';
import { DisplayName, DisplayText, Timestamp } from '../http/schemas.js';
import { GROUP_ID_PATTERN } from './service.js';

export const GroupId = Type.String({
  pattern: GROUP_ID_PATTERN,
  maxLength: 64,
  description: 'lower-case letters, digits, ".", "_" and "-", starting with a letter or digit; at most 64 characters',
});
const Name = DisplayName({ minLength: 1, maxLength: 200 });
const Description = DisplayText({ maxLength: 1000 });

export const GroupSchema = Type.Object(
  {
    id: Type.String(), name: Type.String(), description: Type.Union([Type.String(), Type.Null()]),
    source: Type.Union([Type.Object({ id: Type.String(), dn: Type.String() }, { additionalProperties: false }), Type.Null()], {
      description: 'the directory source this group is mirrored from (read-only here: 409 managed_by_source), or null',
    }),
    createdAt: Timestamp, updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const GroupListQuery = Type.Object(
  { ...listQueryProperties, q: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'group id prefix (case-insensitive)' })) },
  { additionalProperties: false },
);
export type GroupListQueryType = Static<typeof GroupListQuery>;

export const GroupListSchema = Type.Object(
  { groups: Type.Array(GroupSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) },
  { additionalProperties: false },
);

export const GroupCreateBody = Type.Object(
  { id: GroupId, name: Name, description: Type.Optional(Type.Union([Description, Type.Null()])) },
  { additionalProperties: false },
);

export const GroupPatchBody = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Type.Union([Description, Type.Null()])) },
  { additionalProperties: false, minProperties: 1 },
);

export const GroupParams = Type.Object({ id: Type.String({ maxLength: 200 }) }, { additionalProperties: false });
export const GroupMemberParams = Type.Object(
  { id: Type.String({ maxLength: 200 }), personId: Type.String({ maxLength: 200 }) },
  { additionalProperties: false },
);

export const GroupMembersQuery = Type.Object(listQueryProperties, { additionalProperties: false });

export const GroupMembersSchema = Type.Object(
  {
    members: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: 'person id (`sub`)' }),
          email: Type.String(),
          username: Type.String(),
          name: Type.Union([Type.String(), Type.Null()]),
          addedAt: Timestamp,
        },
        { additionalProperties: false },
      ),
    ),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
