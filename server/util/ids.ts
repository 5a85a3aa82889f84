/**
 * Prefixed, time-ordered random ids: `mem_0l9x…`. The time part keeps inserts index-friendly and,
 * with a per-process sequence, makes ids created in the same millisecond sort in creation order —
 * lists order by (createdAt, id), so rows written in one transaction keep the order they were made.
 */
import { randomBase64url } from './crypto.js';

export type IdPrefix =
  | 'usr' | 'acc' | 'ses' | 'mem' | 'inv' | 'key' | 'fam' | 'msg' | 'aud' | 'kid' | 'dev' | 'bcl' | 'pky' | 'rco' | 'apw' | 'fas' | 'dsrc' | 'drun' | 'ncr' | 'ras' | 'sml';

let lastTime = 0;
let sequence = 0;

export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    sequence = 0;
  } else {
    sequence += 1;
  }
  const time = lastTime.toString(36).padStart(9, '0');
  const seq = sequence.toString(36).padStart(4, '0');
  return `${prefix}_${time}${seq}${randomBase64url(8)}`;
}
