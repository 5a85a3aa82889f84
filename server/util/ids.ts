/** Prefixed, time-ordered random ids: `mem_0l9x…`. The time part keeps inserts index-friendly. */
import { randomBytes } from 'node:crypto';

export type IdPrefix =
  | 'usr' | 'acc' | 'ses' | 'mem' | 'inv' | 'key' | 'fam' | 'msg' | 'aud' | 'kid';

export function newId(prefix: IdPrefix): string {
  const time = Date.now().toString(36).padStart(9, '0');
  return `${prefix}_${time}${randomBytes(10).toString('base64url')}`;
}
