/**
 * The back-channel logout delivery log of an application (admin API, panel): newest first, like
 * the audit log, with each row's outcome. Finished rows are kept as long as webhook deliveries
 * (GATEHOUSE_RETENTION_WEBHOOKS_DAYS, 30), pending ones until they finish: the sweeper's rule
 * "back-channel logouts" (data-lifecycle/retention-rules.ts).
 */
import { and, desc, eq } from 'drizzle-orm';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { backchannelLogouts, type BackchannelLogout } from '../../db/schema.js';
import { getApplication } from '../../applications/lookup.js';
import { beforeCursor, listQueryProperties, toPage } from '../../http/pagination.js';
import { DeliveryStatusSchema, deliveryOutcomeProperties } from '../../webhooks/schemas.js';
import { deliveryOutcome, type ErrorDetail } from '../../webhooks/service.js';
import { many } from '../../db/store.js';

type Status = BackchannelLogout['status'];

export const LogoutListQuerySchema = Type.Object(
  { ...listQueryProperties, status: Type.Optional(DeliveryStatusSchema) },
  { additionalProperties: false },
);

export const LogoutRecordSchema = Type.Object(
  {
    id: Type.String({ description: 'Also the `jti` of the logout token' }),
    status: DeliveryStatusSchema,
    reason: Type.String({ description: 'What ended the sign-in: sign_out, end_session, session_revoked, signed_out_elsewhere, password_changed, password_reset, membership_suspended, …' }),
    subject: Type.String({ description: 'The `sub` claim: the person' }),
    sessionId: Type.Union([Type.String(), Type.Null()], { description: 'The `sid` claim; null when an administrator suspended or removed the member' }),
    ...deliveryOutcomeProperties,
  },
  { additionalProperties: false },
);

export const LogoutListSchema = Type.Object(
  { deliveries: Type.Array(LogoutRecordSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) },
  { additionalProperties: false },
);

function logoutRecord(row: BackchannelLogout, detail: ErrorDetail) {
  return {
    id: row.id,
    status: row.status,
    reason: row.reason,
    subject: row.subject,
    sessionId: row.sessionId,
    ...deliveryOutcome(row, detail),
  };
}

/** `detail`: an API key sees whether attempts failed, not how (webhooks/service.ts). */
export async function listLogouts(ctx: AppContext, applicationId: string, limit: number, detail: ErrorDetail, status?: Status, cursor?: string) {
  await getApplication(ctx, applicationId);
  const t = backchannelLogouts;
  const rows = await many(ctx.db
    .select()
    .from(t)
    .where(and(eq(t.applicationId, applicationId), status ? eq(t.status, status) : undefined, beforeCursor(t.createdAt, t.id, cursor)))
    .orderBy(desc(t.createdAt), desc(t.id))
    .limit(limit + 1));
  const page = toPage(rows, limit, (r) => ({ t: r.createdAt.getTime(), id: r.id }));
  return { deliveries: page.items.map((row) => logoutRecord(row, detail)), nextCursor: page.nextCursor };
}
