/**
 * The RADIUS server's line in `gatehouse status` (plugin-api/registries.ts `RecordedStatus`): the
 * listener's state as the server recorded it in `meta` when it started (server.ts), read without
 * a server. A module of its own, so the command loads nothing else of RADIUS.
 */
import type { RecordedStatus } from '../plugin-api/registries.js';

export const RADIUS_STATE_KEY = 'radius.listener';

export interface RadiusState {
  enabled: boolean;
  /** `host:port` of authentication (UDP), when listening. */
  auth: string | null;
  /** `host:port` of accounting (UDP), when listening. */
  accounting: string | null;
}

export function radiusLine(radius: RadiusState | null, running: boolean | undefined): string {
  if (!radius) return 'not recorded yet (no server of this version has run here)';
  if (!radius.enabled) return 'off (GATEHOUSE_RADIUS=on or --radius turns it on)';
  const when = running === undefined ? 'on (as the last instance to start recorded it)' : running ? 'on' : 'on when the server last ran';
  return `${when}: UDP ${radius.auth} (authentication), ${radius.accounting} (accounting)`;
}

export const radiusStatus: RecordedStatus = {
  name: 'radius',
  label: 'RADIUS',
  metaKey: RADIUS_STATE_KEY,
  line: (recorded, running) => radiusLine(recorded as RadiusState | null, running),
};
