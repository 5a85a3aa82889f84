/** On/off settings as the environment and launchers spell them (config.ts, cli/launch.ts). */

/**
 * An on/off environment switch: `1`/`true` on, `0`/`false` off, unset or empty `fallback`, and
 * undefined for anything else (config.ts turns that into a configuration error; launchers treat
 * it as the fallback).
 */
export function parseSwitch(raw: string | undefined, fallback: boolean): boolean | undefined {
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1' || raw === 'true') return true;
  return raw === '0' || raw === 'false' ? false : undefined;
}
