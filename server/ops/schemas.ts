/** Wire shapes of the backup admin API. */
import { Type } from 'typebox';
import { NullableTimestamp, Timestamp } from '../http/schemas.js';

export const BackupRecordSchema = Type.Object(
  {
    id: Type.String(),
    createdAt: Timestamp,
    size: Type.Integer({ description: 'bytes' }),
    encrypted: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const BackupListSchema = Type.Object(
  { backups: Type.Array(BackupRecordSchema), nextCursor: Type.Null() },
  { additionalProperties: false },
);

export const BackupIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) }, { additionalProperties: false });

const Counts = Type.Record(Type.String(), Type.Integer(), { description: 'rows, per rule or step' });

export const SweepRunSchema = Type.Object(
  {
    startedAt: Timestamp,
    finishedAt: Timestamp,
    durationMs: Type.Integer(),
    pruned: Counts,
    total: Type.Integer(),
    vacuumedPages: Type.Integer({ description: 'pages handed back to the file system' }),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

const Days = Type.Integer({ minimum: 0, description: 'days; 0 keeps for ever' });

export const SweeperStatusSchema = Type.Object(
  {
    intervalSeconds: Type.Integer({ description: 'GATEHOUSE_SWEEP_INTERVAL; 0 = off' }),
    running: Type.Boolean(),
    nextRunAt: NullableTimestamp,
    lastRun: Type.Union([SweepRunSchema, Type.Null()]),
    runs: Type.Integer(),
    prunedTotal: Type.Integer(),
    retentionDays: Type.Object({ tokens: Days, sessions: Days, webhooks: Days, audit: Days, invitations: Days }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

export const DeletionSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('application'), Type.Literal('sso_group'), Type.Literal('membership')]),
    target: Type.String(),
    requestedAt: Timestamp,
    requestedBy: Type.String(),
    removed: Counts,
  },
  { additionalProperties: false },
);

export const OperationsSchema = Type.Object(
  { sweeper: SweeperStatusSchema, deletions: Type.Array(DeletionSchema) },
  { additionalProperties: false },
);
