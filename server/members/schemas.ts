/** Wire schemas of application users (memberships), DESIGN §4.5. */
import { Type, type Static } from 'typebox';
import { listQueryProperties } from '../http/pagination.js';
import { Timestamp } from '../http/schemas.js';
import { SecondFactorSummarySchema } from '../accounts/second-factor/schemas.js';

const Status = Type.Union([Type.Literal('active'), Type.Literal('suspended')]);
const Role = Type.Union([Type.Literal('member'), Type.Literal('admin')]);
const ProfileValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

export const MemberRecordSchema = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  status: Status,
  role: Role,
  profile: Type.Record(Type.String(), ProfileValue),
  joinedAt: Timestamp,
  lastActiveAt: Timestamp,
  updatedAt: Timestamp,
});

/** One member read alone also shows their second factors (counts and dates, never secrets). */
export const MemberDetailSchema = Type.Object({ ...MemberRecordSchema.properties, secondFactor: SecondFactorSummarySchema });

/** A member in a list also says whether they have a second factor (for applications that require one). */
export const MemberListItemSchema = Type.Object({
  ...MemberRecordSchema.properties,
  hasSecondFactor: Type.Boolean({ description: 'a confirmed authenticator app or a passkey; without one, an application whose MFA policy is required makes them enrol one at their next sign-in' }),
});

export const MemberListSchema = Type.Object({
  users: Type.Array(MemberListItemSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export const MemberListQuerySchema = Type.Object(
  {
    ...listQueryProperties,
    status: Type.Optional(Status),
    role: Type.Optional(Role),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type MemberListQuery = Static<typeof MemberListQuerySchema>;

export const MemberPatchSchema = Type.Object(
  {
    status: Type.Optional(Status),
    role: Type.Optional(Role),
    /** Merged into the stored profile; `null` clears an optional field. */
    profile: Type.Optional(Type.Record(Type.String(), Type.Union([ProfileValue, Type.Null()]), { maxProperties: 50 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type MemberPatch = Static<typeof MemberPatchSchema>;

export const MemberParams = Type.Object({ id: Type.String({ maxLength: 200 }), uid: Type.String({ maxLength: 200 }) });
