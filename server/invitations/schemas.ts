/** Wire schemas of invitations, DESIGN §4.6. */
import { Type, type Static } from 'typebox';
import { listQueryProperties } from '../http/pagination.js';
import { DisplayText, NullableTimestamp, Timestamp } from '../http/schemas.js';

const Role = Type.Union([Type.Literal('member'), Type.Literal('admin')]);
const Status = Type.Union([Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('revoked'), Type.Literal('expired')]);

export const InvitationCreateSchema = Type.Object(
  {
    // Addresses are checked one by one in the service so a 400 can name each bad one.
    emails: Type.Array(Type.String({ maxLength: 320 }), { minItems: 1, maxItems: 100 }),
    role: Type.Optional(Role),
    message: Type.Optional(DisplayText({ maxLength: 1000 })),
    // Checked one by one in the service so a 400 can name each unknown group. Admin token only.
    groups: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 200, uniqueItems: true, description: 'directory group ids the person joins on accepting (admin token only)',
    })),
  },
  { additionalProperties: false },
);
export type InvitationCreate = Static<typeof InvitationCreateSchema>;

export const InvitationRecordSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Role,
  message: Type.Union([Type.String(), Type.Null()]),
  status: Status,
  createdAt: Timestamp,
  expiresAt: Timestamp,
  acceptedAt: NullableTimestamp,
  revokedAt: NullableTimestamp,
  /** Whether the last e-mail for this invitation was accepted by the SMTP server. */
  emailSent: Type.Boolean(),
  emailError: Type.Union([Type.String(), Type.Null()]),
  /** Directory groups the person joins on accepting (those deleted meanwhile are skipped). */
  groups: Type.Array(Type.String()),
});

/** Create and resend answers: the record plus the link, shown only here. */
export const InvitationWithLinkSchema = Type.Object({
  ...InvitationRecordSchema.properties,
  acceptUrl: Type.String(),
});

export const InvitationCreatedSchema = Type.Object({
  invitations: Type.Array(InvitationWithLinkSchema),
  skipped: Type.Array(
    Type.Object({ email: Type.String(), reason: Type.Union([Type.Literal('already_member'), Type.Literal('already_invited')]) }),
  ),
});

export const InvitationListQuerySchema = Type.Object(
  { ...listQueryProperties, status: Type.Optional(Status) },
  { additionalProperties: false },
);
export type InvitationListQuery = Static<typeof InvitationListQuerySchema>;

export const InvitationListSchema = Type.Object({
  invitations: Type.Array(InvitationRecordSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export const InvitationParams = Type.Object({ id: Type.String({ maxLength: 200 }), iid: Type.String({ maxLength: 200 }) });
