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

const HostNamesSchema = Type.Object({ dns: Type.Array(Type.String()), ips: Type.Array(Type.String()) }, { additionalProperties: false });

/** The LAN TLS state (issue 22): what devices compare when they install the CA, and what to renew. */
export const TlsStatusSchema = Type.Object(
  {
    mode: Type.Union([Type.Literal('off'), Type.Literal('auto'), Type.Literal('files')]),
    ca: Type.Union([
      Type.Object(
        {
          fingerprint: Type.String({ description: 'SHA-256 of the CA certificate, AB:CD:… (compare it on each device)' }),
          notBefore: Timestamp,
          notAfter: Timestamp,
          nameConstraints: Type.Union([HostNamesSchema, Type.Null()], { description: 'what the CA may vouch for; null: a CA made before name constraints' }),
          renewalDue: Type.Boolean({ description: 'expires within 60 days, has no name constraints, or leaves names uncovered' }),
          downloadUrl: Type.String(),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    certificate: Type.Union([
      Type.Object({ fingerprint: Type.String(), notAfter: Timestamp, names: HostNamesSchema }, { additionalProperties: false }),
      Type.Null(),
    ]),
    uncovered: Type.Array(Type.String(), { description: "this machine's names and addresses the CA does not cover (renew the CA to add them)" }),
  },
  { additionalProperties: false },
);
