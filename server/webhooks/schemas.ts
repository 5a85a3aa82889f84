/** Wire schemas of webhook deliveries (DESIGN §4.11, §4.2). */
import { Type } from 'typebox';
import { listQueryProperties } from '../http/pagination.js';
import { NullableTimestamp, Timestamp } from '../http/schemas.js';
import { WEBHOOK_EVENT_TYPES } from './outbox.js';

export const DeliveryStatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]);

/** How a delivery of any outbox went (webhooks, back-channel logouts): `status` and these. */
export const deliveryOutcomeProperties = {
  attempts: Type.Integer(),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'For API keys only a 2xx is shown (null otherwise).' }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the last attempt failed; API keys see only "delivery_failed", so a closed port and an answering one look alike.',
  }),
  lastAttemptAt: NullableTimestamp,
  /** Only while pending. */
  nextAttemptAt: NullableTimestamp,
  createdAt: Timestamp,
  deliveredAt: NullableTimestamp,
};

export const DeliveryListQuerySchema = Type.Object(
  { ...listQueryProperties, status: Type.Optional(DeliveryStatusSchema) },
  { additionalProperties: false },
);

export const DeliveryRecordSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.String({ description: `The event kind: ${WEBHOOK_EVENT_TYPES.join(', ')}.` }),
    status: DeliveryStatusSchema,
    ...deliveryOutcomeProperties,
    /** The event exactly as sent (`{id, type, createdAt, applicationId, data}`), parsed. */
    payload: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false },
);

export const DeliveryListSchema = Type.Object(
  { deliveries: Type.Array(DeliveryRecordSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) },
  { additionalProperties: false },
);

export const DeliveryParamsSchema = Type.Object(
  { id: Type.String({ maxLength: 200 }), did: Type.String({ maxLength: 200 }) },
  { additionalProperties: false },
);
