/**
 * `saml` as an application field (plugin-api/application-fields.ts): its schemas (settings.ts) in
 * the create, PATCH and record, its rules checked with the application's others (all mistakes in
 * one 400), the settings and the entity ID in the application's row, and the entity ID kept to one
 * application (409 `entity_id_in_use`, in the write's transaction; the unique index stands behind
 * it). An API key may not change it: it says where assertions about people go.
 */
import type { Db, Tx } from '../db/client.js';
import { existingGroupIds } from '../groups/queries.js';
import { conflict } from '../http/problem.js';
import type { ApplicationField } from '../plugin-api/application-fields.js';
import type { SamlSettings } from '../db/schema.js';
import { entityIdHolder } from './queries.js';
import { SamlField, samlRecord, SamlRecordSchema, samlSettings, type SamlInput } from './settings.js';

declare module '../plugin-api/application-fields.js' {
  interface ApplicationFieldInputs {
    saml: SamlInput | null;
  }
  interface ApplicationFieldRecords {
    saml: (SamlSettings & { entityId: string }) | null;
  }
}

/** Refuses an entity ID another application has (inside the write's transaction). */
export async function claimEntityId(tx: Tx, id: string, entityId: string): Promise<void> {
  // Naming the entity ID, not the application that has it: an API key may only learn about its own.
  if (await entityIdHolder(tx, entityId, id)) throw conflict('entity_id_in_use', `The entity ID ${entityId} is already another application's.`);
}

export function samlField(db: Db): ApplicationField<SamlInput | null> {
  return {
    name: 'saml',
    after: 'forwardAuth',
    input: SamlField,
    record: SamlRecordSchema,
    toRecord: (app) => samlRecord(app.saml, app.samlEntityId),
    async prepare({ id, given, current, profileFields, errors }) {
      if (given === undefined) return undefined;
      if (given === null) return current?.saml ? { columns: { saml: null, samlEntityId: null } } : undefined;
      const checked = await samlSettings(given, { profileFields, existingGroups: (ids) => existingGroupIds(db, ids) }, errors);
      if (!checked) return undefined;
      // Before the write: the row's unique index would otherwise refuse it first. Again inside it, for a race.
      await claimEntityId(db, id, checked.entityId);
      return {
        columns: { saml: checked.settings, samlEntityId: checked.entityId },
        audit: { samlEntityId: checked.entityId },
        written: (tx) => claimEntityId(tx, id, checked.entityId),
      };
    },
    keyMayNot: (current, given) =>
      JSON.stringify(given) !== JSON.stringify(samlRecord(current.saml, current.samlEntityId)) ? 'change the SAML service provider settings' : undefined,
  };
}
