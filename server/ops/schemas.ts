/** Wire shapes of the backup admin API. */
import { Type } from 'typebox';
import { Timestamp } from '../http/schemas.js';

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
