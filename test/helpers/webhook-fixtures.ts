/** Fixtures for webhook tests: an API key row written straight to the store (access tests). */
import { apiKeys } from '../../server/db/schema.js';
import type { Db } from '../../server/db/client.js';
import { randomToken, sha256 } from '../../server/util/crypto.js';
import { newId } from '../../server/util/ids.js';
import { exec } from '../../server/db/store.js';

export async function insertApiKey(db: Db, applicationId: string, scopes: string[]): Promise<string> {
  const key = randomToken('ghk_');
  await exec(db.insert(apiKeys)
    .values({ id: newId('key'), applicationId, name: 'test key', prefix: key.slice(0, 8), keyHash: sha256(key), scopes }));
  return key;
}
